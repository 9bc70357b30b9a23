"""A tiny MNIST training loop for the dev box (mounted at /workspace/src)."""
import mlflow
import torch
from torch import nn
from torchvision import datasets, transforms

data = datasets.MNIST("/workspace/data", train=True, download=True, transform=transforms.ToTensor())
loader = torch.utils.data.DataLoader(data, batch_size=64, shuffle=True)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 128), nn.ReLU(), nn.Linear(128, 10)).to(device)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)

with mlflow.start_run():
    for step, (x, y) in enumerate(loader):
        loss = nn.functional.cross_entropy(model(x.to(device)), y.to(device))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0:
            mlflow.log_metric("loss", loss.item(), step=step)
        if step == 500:
            break
