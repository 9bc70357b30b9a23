"""Placeholder training script: bert_train mounts this folder at /workspace and runs it."""
import argparse
import os

parser = argparse.ArgumentParser()
parser.add_argument("--data_dir", default="/data")
parser.add_argument("--output_dir", default="/output")
args = parser.parse_args()
rank = os.environ.get("RANK", "0")
world = os.environ.get("WORLD_SIZE", "1")
print(f"rank {rank}/{world}: data={args.data_dir} output={args.output_dir}")
