"""What `docker compose config` does to this repository's stack files, done here without Docker.

Enough of the Compose Specification for docker-compose.yml and deploy/compose.rs6.yml:
  - YAML anchors, aliases and merge keys (`<<`), by PyYAML's safe loader;
  - interpolation of `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `${VAR:?err}`, `${VAR?err}`,
    `$VAR` and `$$` in values (not keys), as the spec's "Interpolation" section says;
  - validation of each file, after interpolation, against the spec's JSON schema
    (compose-spec/compose-spec.json, vendored; jsonschema pinned in requirements.txt);
  - merging later files onto the first by the spec's merge rules ("Merge and override"): mappings
    merge key by key; `command`, `entrypoint` and `healthcheck.test` are replaced; `ports`,
    `expose`, `dns`, `dns_search`, `tmpfs`, `external_links` append (no duplicates);
    `environment` and `labels` merge by name; `volumes` and `devices` merge by container path;
    other sequences and scalars are replaced;
  - the normalisations the tests read: relative bind-mount sources made absolute against the
    project directory (the first file's), list-form `environment` and `depends_on` as mappings.
Compose features these files do not use (include, extends, env_file, .env files, profiles'
activation, secrets) are refused rather than half-done.
"""
import json
import re
from pathlib import Path

import jsonschema
import yaml

SCHEMA = Path(__file__).resolve().parent / "compose-spec" / "compose-spec.json"

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BRACED = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?:(?P<op>:-|-|:\?|\?|:\+|\+)(?P<arg>.*))?$", re.S)


class ComposeError(Exception):
    pass


def interpolate_string(text: str, env: dict) -> str:
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c != "$" or i + 1 == len(text):
            out.append(c)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "$":
            out.append("$")
            i += 2
        elif nxt == "{":
            depth, j = 1, i + 2
            while j < len(text) and depth:  # defaults may hold ${...} themselves
                depth += {"{": 1, "}": -1}.get(text[j], 0) if text[j - 1] == "$" or text[j] == "}" else 0
                j += 1
            if depth:
                raise ComposeError(f"invalid interpolation format: {text[i:]}")
            out.append(_braced(text[i + 2:j - 1], env))
            i = j
        else:
            m = _NAME.match(text, i + 1)
            if m:
                out.append(env.get(m.group(0), ""))
                i = m.end()
            else:
                out.append(c)
                i += 1
    return "".join(out)


def _braced(inner: str, env: dict) -> str:
    b = _BRACED.match(inner)
    if not b:
        raise ComposeError(f"invalid interpolation format: ${{{inner}}}")
    name, op, arg = b.group("name"), b.group("op"), b.group("arg")
    value = env.get(name)
    if op is None:
        return value or ""
    arg = interpolate_string(arg, env)
    unset_or_empty = not value
    if op == ":-":
        return arg if unset_or_empty else value
    if op == "-":
        return arg if value is None else value
    if op == ":?":
        if unset_or_empty:
            raise ComposeError(f"required variable {name} is missing a value: {arg}")
        return value
    if op == "?":
        if value is None:
            raise ComposeError(f"required variable {name} is missing a value: {arg}")
        return value
    if op == ":+":
        return "" if unset_or_empty else arg
    return "" if value is None else arg  # "+"


def interpolate(node, env: dict):
    if isinstance(node, str):
        return interpolate_string(node, env)
    if isinstance(node, list):
        return [interpolate(v, env) for v in node]
    if isinstance(node, dict):
        return {k: interpolate(v, env) for k, v in node.items()}
    return node


def load(path: Path, env: dict) -> dict:
    """One file: parsed (anchors and merge keys expanded), interpolated, validated."""
    with open(path) as f:
        raw = yaml.safe_load(f)
    if not isinstance(raw, dict):
        raise ComposeError(f"{path}: not a mapping")
    for unsupported in ("include",):
        if unsupported in raw:
            raise ComposeError(f"{path}: '{unsupported}' is not handled by this resolver")
    for name, service in (raw.get("services") or {}).items():
        for unsupported in ("extends", "env_file"):
            if unsupported in (service or {}):
                raise ComposeError(f"{path}: service {name}: '{unsupported}' is not handled by this resolver")
    doc = interpolate(raw, env)
    validate(doc, str(path))
    return doc


def validate(doc: dict, where: str):
    with open(SCHEMA) as f:
        schema = json.load(f)
    validator = jsonschema.Draft7Validator(schema)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"{'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors[:10]]
        raise ComposeError(f"{where} does not follow the Compose Specification:\n  " + "\n  ".join(lines))


# ---- merging (Compose Specification, "Merge and override") ----

REPLACED = {"command", "entrypoint"}
APPENDED = {"ports", "expose", "dns", "dns_search", "tmpfs", "external_links", "cap_add", "cap_drop",
            "security_opt", "extra_hosts", "group_add"}
BY_NAME = {"environment", "labels", "annotations", "sysctls"}
BY_TARGET = {"volumes", "devices"}


def _as_mapping(value):
    if isinstance(value, dict):
        return dict(value)
    out = {}
    for item in value or []:
        key, sep, val = str(item).partition("=")
        out[key] = val if sep else None
    return out


def _target(entry):
    if isinstance(entry, dict):
        return entry.get("target")
    parts = str(entry).split(":")
    return parts[1] if len(parts) > 1 else parts[0]


def merge_service(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        if key not in out or key in REPLACED:
            out[key] = value
        elif key in BY_NAME:
            out[key] = {**_as_mapping(out[key]), **_as_mapping(value)}
        elif key in APPENDED:
            out[key] = list(out[key]) + [v for v in value if v not in out[key]]
        elif key in BY_TARGET:
            merged = {_target(v): v for v in out[key]}
            merged.update({_target(v): v for v in value})
            out[key] = list(merged.values())
        elif key == "depends_on":
            out[key] = {**_depends_on(out[key]), **_depends_on(value)}
        elif key == "healthcheck" and isinstance(value, dict):
            out[key] = {**out[key], **value}  # test is replaced with it
        elif isinstance(out[key], dict) and isinstance(value, dict):
            out[key] = _merge_mappings(out[key], value)
        else:
            out[key] = value
    return out


def _merge_mappings(base: dict, over: dict) -> dict:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merge_mappings(out[key], value) if isinstance(out.get(key), dict) and isinstance(value, dict) else value
    return out


def _depends_on(value):
    if isinstance(value, dict):
        return dict(value)
    return {name: {"condition": "service_started"} for name in value or []}


def merge(base: dict, over: dict) -> dict:
    """One Compose file over another: each service by merge_service, every other key as mappings merge."""
    out = _merge_mappings(base, {key: value for key, value in over.items() if key != "services"})
    if "services" in over:
        services = dict(out.get("services") or {})
        for name, service in (over["services"] or {}).items():
            services[name] = merge_service(services[name], service) if name in services else service
        out["services"] = services
    return out


# ---- normalisation ----

def _normalise_service(service: dict, project: Path) -> dict:
    s = dict(service)
    if "environment" in s:
        s["environment"] = _as_mapping(s["environment"])
    if "depends_on" in s:
        s["depends_on"] = _depends_on(s["depends_on"])
    if "volumes" in s:
        volumes = []
        for v in s["volumes"]:
            if isinstance(v, str):
                source, sep, rest = v.partition(":")
                if sep and source.startswith("."):
                    v = f"{(project / source).resolve()}:{rest}"
            volumes.append(v)
        s["volumes"] = volumes
    return s


def resolve(files, project: Path, env: dict) -> dict:
    """The stack as `docker compose -f FILE... config` would describe it (see the module's doc)."""
    docs = [load(project / f, env) for f in files]
    config = docs[0]
    for doc in docs[1:]:
        config = merge(config, doc)
    config = {k: v for k, v in config.items() if not k.startswith("x-")}
    config["services"] = {n: _normalise_service(s, project) for n, s in config["services"].items()}
    validate(config, " + ".join(map(str, files)))
    return config
