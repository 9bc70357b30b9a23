"""A toy training loop: logistic regression by gradient descent on made-up,
linearly separable points. Pure Python plus tqdm, so it runs the same in a
laptop venv, in the image and in a Kubernetes pod."""
import math
import os
import random

from tqdm import tqdm

random.seed(0)
points = [(random.uniform(-1, 1), random.uniform(-1, 1)) for _ in range(400)]
data = [((x, y), 1.0 if x + y > 0 else 0.0) for x, y in points]
w = [0.0, 0.0]
b = 0.0
epochs = int(os.environ.get("EPOCHS", "3"))
for epoch in tqdm(range(epochs), desc="epochs", disable=None):
    for (x, y), label in data:
        p = 1 / (1 + math.exp(-(w[0] * x + w[1] * y + b)))
        g = p - label
        w[0] -= 0.5 * g * x
        w[1] -= 0.5 * g * y
        b -= 0.5 * g
correct = sum((w[0] * x + w[1] * y + b > 0) == (label == 1.0) for (x, y), label in data)
print(f"epochs {epochs}, accuracy {correct / len(data):.2f}")
