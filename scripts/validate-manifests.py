#!/usr/bin/env python3
"""Validate the YAML files of sclc's k8s, trainjob and compose targets.

Usage: validate-manifests.py --schemas DIR FILE...

Run with <repo>/.venv/bin/python (scripts/install-test-tools.sh installs
kubernetes-validate, jsonschema and PyYAML there). DIR holds the CRDs and
compose-spec.json (crates/scl-backends/tests/schemas/).

Each file is read with PyYAML (YAML 1.1, as Kubernetes' and kubectl's
readers) and checked by what it is:
- a core kind (batch/v1 Job, ...): kubernetes_validate.validate(doc,
  "1.35.0", strict=True) (unknown fields are errors);
- a kubeflow.org/v1 PyTorchJob or a trainer.kubeflow.org/v1alpha1 TrainJob:
  jsonschema against the CRD's spec.versions[].schema.openAPIV3Schema, made
  strict the way the API server's strict field validation is (every object
  with `properties` and no `additionalProperties` or
  `x-kubernetes-preserve-unknown-fields` refuses other fields); each
  PyTorchJob replica's pod template is also validated as a core v1
  PodTemplate by kubernetes_validate;
- a file without apiVersion (compose.yaml): jsonschema against
  compose-spec.json.

Prints one JSON line per file: {"file", "kind", "errors": [...],
"parsed": <the documents as PyYAML read them>}. Exit status 0 unless the
script itself fails (the caller reads the errors).
"""

import argparse
import copy
import datetime
import json
import os
import sys

import jsonschema
import kubernetes_validate
import yaml

K8S_VERSION = "1.35.0"

CRDS = {
    ("kubeflow.org/v1", "PyTorchJob"): "kubeflow.org_pytorchjobs.v1.9.0.yaml",
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"): "trainer.kubeflow.org_trainjobs.yaml",
}


def strict(schema):
    """The schema with unknown fields refused wherever fields are listed."""
    s = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if (
                "properties" in node
                and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")
            ):
                node["additionalProperties"] = False
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(s)
    return s


def crd_schema(schemas, api_version, kind):
    with open(os.path.join(schemas, CRDS[(api_version, kind)])) as f:
        crd = yaml.safe_load(f)
    version = api_version.split("/")[1]
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return strict(v["schema"]["openAPIV3Schema"])
    raise SystemExit(f"no version {version} in the CRD of {kind}")


def schema_errors(schema, doc):
    v = jsonschema.Draft7Validator(schema)
    return [
        f"{'/'.join(str(p) for p in e.absolute_path)}: {e.message}"
        for e in sorted(v.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    ]


def core_errors(doc):
    try:
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        return []
    except kubernetes_validate.ValidationError as e:
        path = "/".join(str(p) for p in e.path)
        return [f"{path}: {e.message}"]
    except Exception as e:  # a kind the package does not know, ...
        return [f"{type(e).__name__}: {e}"]


def plain(x):
    """PyYAML's reading as JSON data (dates as tagged strings, so that a
    misread date shows up as a difference, not a crash)."""
    if isinstance(x, dict):
        return {str(k) if not isinstance(k, str) else k: plain(v) for k, v in x.items()}
    if isinstance(x, list):
        return [plain(v) for v in x]
    if isinstance(x, (datetime.date, datetime.datetime)):
        return {"!date": x.isoformat()}
    return x


def check(path, schemas):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as e:
        return {"file": path, "kind": None, "errors": [f"YAML: {e}"], "parsed": None}
    errors = []
    kinds = []
    for doc in docs:
        if not isinstance(doc, dict):
            errors.append("a document is not a mapping")
            continue
        api, kind = doc.get("apiVersion"), doc.get("kind")
        if api is None:
            kinds.append("compose")
            with open(os.path.join(schemas, "compose-spec.json")) as f:
                errors += schema_errors(json.load(f), doc)
        elif (api, kind) in CRDS:
            kinds.append(kind)
            errors += schema_errors(crd_schema(schemas, api, kind), doc)
            if kind == "PyTorchJob":
                specs = (doc.get("spec") or {}).get("pytorchReplicaSpecs") or {}
                for role, rs in specs.items():
                    if isinstance(rs, dict) and "template" in rs:
                        pt = {
                            "apiVersion": "v1",
                            "kind": "PodTemplate",
                            "metadata": {"name": "check"},
                            "template": rs["template"],
                        }
                        errors += [f"{role} template: {e}" for e in core_errors(pt)]
        else:
            kinds.append(kind)
            errors += core_errors(doc)
    return {
        "file": path,
        "kind": ",".join(str(k) for k in kinds),
        "errors": errors,
        "parsed": plain(docs),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--schemas", required=True)
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    for p in a.files:
        print(json.dumps(check(p, a.schemas), sort_keys=True), flush=True)


if __name__ == "__main__":
    sys.exit(main())
