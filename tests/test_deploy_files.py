"""The Dockerfile and docker-compose.yml agree with the app (issue 14), checked without a Docker
engine: every container's command is one `onnx-studio serve` takes with its environment, every
ONNX_STUDIO_* variable is a setting, health checks ask a path the app serves, the image is built
as CI builds the wheel and runs no node, and the default service is on loopback behind a token."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from app import cli, create_app, settings

REPO = Path(__file__).resolve().parent.parent
DOCKERFILE = REPO / "Dockerfile"
COMPOSE = REPO / "docker-compose.yml"
# what a user sets before `docker compose up` (README: Run with Docker)
USER_ENV = {"ONNX_STUDIO_AUTH_TOKEN": "t0ken-from-env", "POSTGRES_PASSWORD": "pw", "MINIO_ROOT_PASSWORD": "12345678"}


# --- docker-compose.yml -------------------------------------------------------------------------


class Unset(Exception):
    """A ${VAR:?message} with VAR unset or empty: compose refuses the file."""


_VAR = re.compile(r"\$(?:(\$)|\{(\w+)(?:(:?[-?])([^}]*))?\}|(\w+))")


def _interpolate(value, environ: dict[str, str]):
    """Compose's interpolation ($$, $VAR, ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?err},
    ${VAR?err}) of every string in the parsed file, as it does before it looks at profiles."""
    if isinstance(value, dict):
        return {k: _interpolate(v, environ) for k, v in value.items()}
    if isinstance(value, list):
        return [_interpolate(v, environ) for v in value]
    if not isinstance(value, str):
        return value

    def sub(m: re.Match) -> str:
        if m.group(1):
            return "$"
        name, op, arg = m.group(2) or m.group(5), m.group(3) or "", m.group(4) or ""
        val = environ.get(name)
        missing = val is None or (op.startswith(":") and val == "")
        if op.endswith("?") and missing:
            raise Unset(f"{name}: {arg}")
        if op.endswith("-") and missing:
            return arg
        return val or ""

    return _VAR.sub(sub, value)


def _compose(environ: dict[str, str] | None = None) -> dict:
    return _interpolate(yaml.safe_load(COMPOSE.read_text(encoding="utf-8")), USER_ENV if environ is None else environ)


def _environment(service: dict) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        env = dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {k: "" if v is None else str(v) for k, v in env.items()}


def _argv(command) -> list[str]:
    return shlex.split(command) if isinstance(command, str) else [str(c) for c in command]


def _app_services(compose: dict) -> dict[str, dict]:
    """The services running the image the Dockerfile builds."""
    return {name: s for name, s in compose["services"].items() if "build" in s}


# --- Dockerfile ---------------------------------------------------------------------------------


def _instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) in order, continuation lines joined, comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("#") or not line.strip():
            continue
        pending += line.rstrip()
        if pending.endswith("\\"):
            pending = pending[:-1] + " "
            continue
        word, _, rest = pending.strip().partition(" ")
        out.append((word.upper(), rest.strip()))
        pending = ""
    return out


def _stages() -> list[tuple[str, list[tuple[str, str]]]]:
    """(FROM's arguments, the stage's instructions)."""
    stages: list[tuple[str, list[tuple[str, str]]]] = []
    for word, rest in _instructions():
        if word == "FROM":
            stages.append((rest, []))
        else:
            stages[-1][1].append((word, rest))
    return stages


def _image_env() -> dict[str, str]:
    """The runtime stage's ENV (KEY=VALUE pairs)."""
    env: dict[str, str] = {}
    for word, rest in _stages()[-1][1]:
        if word == "ENV":
            env.update(pair.split("=", 1) for pair in shlex.split(rest))
    return env


def _exec_form(rest: str) -> list[str]:
    return json.loads(rest)


def _image_cmd() -> list[str]:
    (cmd,) = [rest for word, rest in _stages()[-1][1] if word == "CMD"]
    return _exec_form(cmd)


def _image_healthcheck() -> list[str]:
    (check,) = [rest for word, rest in _stages()[-1][1] if word == "HEALTHCHECK"]
    return _exec_form(check[check.index("CMD ") + 4 :])


# --- the checks ---------------------------------------------------------------------------------


def _serve_values(argv: list[str], environ: dict[str, str]) -> dict:
    """What `onnx-studio serve` makes of this command line and environment (argparse's errors and
    the settings' both fail the test)."""
    assert argv[:2] == ["onnx-studio", "serve"], argv
    parser = cli.serve_parser()
    try:
        args = parser.parse_args(argv[2:])
    except SystemExit:
        pytest.fail(f"onnx-studio serve refuses {argv[2:]}")
    try:
        return settings.resolve(args, environ)
    except settings.SettingsError as exc:
        pytest.fail(f"{argv}: {exc}")


def test_every_service_runs_a_command_the_cli_takes_with_its_environment():
    compose = _compose()
    services = _app_services(compose)
    assert {"studio", "team"} <= set(services)
    for name, service in services.items():
        argv = _argv(service["command"]) if "command" in service else _image_cmd()
        values = _serve_values(argv, {**_image_env(), **_environment(service)})
        assert values["host"] == "0.0.0.0", name  # reachable from outside its container
        assert str(values["data_dir"]) == "/data", name  # the image's volume
        published = [str(p).rsplit(":", 1)[1] for p in service.get("ports", [])]
        assert published and all(p == str(values["port"]) for p in published), (name, published)
    team = _serve_values(_argv(services["team"]["command"]), {**_image_env(), **_environment(services["team"])})
    assert team["workers"] > 1 and services["team"]["deploy"]["replicas"] > 1  # gunicorn, several replicas


def test_the_image_runs_the_server_with_its_defaults():
    values = _serve_values(_image_cmd(), _image_env())
    assert values["host"] == "0.0.0.0" and values["port"] == 8080 and str(values["data_dir"]) == "/data"
    runtime = _stages()[-1][1]
    assert ("EXPOSE", "8080") in runtime and ("VOLUME", "/data") in runtime


def test_every_onnx_studio_variable_is_a_setting():
    known = {s.env for s in settings.SETTINGS} | {settings.CONFIG_ENV}
    compose = _compose()
    named = {k for s in compose["services"].values() for k in _environment(s) if k.startswith(settings.ENV_PREFIX)}
    named |= {k for k in _image_env() if k.startswith(settings.ENV_PREFIX)}
    assert {"ONNX_STUDIO_AUTH_TOKEN", "ONNX_STUDIO_DATA_DIR", "ONNX_STUDIO_HOST"} <= named
    # any mention at all, ${...} references and the healthcheck's included
    for path in (COMPOSE, DOCKERFILE):
        named |= set(re.findall(r"\bONNX_STUDIO_\w+", path.read_text(encoding="utf-8")))
    assert named <= known, sorted(named - known)
    assert {"ONNX_STUDIO_DATABASE_URL", "ONNX_STUDIO_BLOB_URL"} <= named  # the team profile's back ends


def _checked_path(test: list[str]) -> str:
    (url,) = re.findall(r"https?://[^'\"\s]+", " ".join(test))
    return urlsplit(url.replace("%s", "8080")).path


def test_health_checks_ask_a_path_the_app_serves(tmp_path):
    served = {rule.rule for rule in create_app({"DATA_DIR": str(tmp_path / "data")}).url_map.iter_rules()}
    checks = {"Dockerfile": _image_healthcheck()}
    for name, service in _app_services(_compose()).items():
        assert service["healthcheck"]["test"][0] in ("CMD", "CMD-SHELL"), name
        checks[name] = service["healthcheck"]["test"][1:]
    for where, test in checks.items():
        assert test[0] == "python", where  # no curl in the slim image
        path = _checked_path(test)
        assert path in ("/healthz", "/readyz") and path in served, (where, path)


def test_the_image_is_built_as_ci_builds_the_wheel_and_runs_no_node():
    stages = _stages()
    assert len(stages) >= 2
    (runtime_from, runtime), builds = stages[-1], stages[:-1]
    assert runtime_from.split()[0] == "python:3.11-slim-bookworm"
    assert any(f.split()[0].startswith("node:20") for f, _ in builds)
    build_runs = " ".join(rest for _, steps in builds for word, rest in steps if word == "RUN")
    # what `make bundle` and tests/browser/test_wheel.py run: the front end, then sdist -> wheel
    assert "scripts/build_frontend.py" in build_runs
    assert re.search(r"python -m build\b", build_runs)
    (build_name,) = [f.split()[-1] for f, _ in builds if " AS " in f.upper()]

    copied = [rest for word, rest in runtime if word == "COPY"]
    assert any(f"--from={build_name}" in c and ".whl" in c for c in copied), copied
    assert all("--from=" in c for c in copied), "the runtime stage takes the wheel, not the sources"
    runs = " ".join(rest for word, rest in runtime if word == "RUN")
    assert re.search(r"pip install [^&]*\.whl", runs), runs
    assert re.search(r"pip install [^&]*\.whl\)?\[team\]", runs), runs  # the team profile's clients
    for word, rest in runtime:
        assert not re.search(r"\b(npm|npx|node|nodejs)\b", rest), (word, rest)
    assert _image_cmd() == ["onnx-studio", "serve"]

    users = [rest for word, rest in runtime if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    words = [word for word, _ in runtime]
    assert words.index("USER") < words.index("CMD")

    ignored = (REPO / ".dockerignore").read_text(encoding="utf-8").split()
    assert {"node_modules", ".env", "app/static/dist", "app/static/vendor"} <= set(ignored)


def test_the_default_service_is_on_loopback_behind_a_token():
    studio = _compose()["services"]["studio"]
    assert "profiles" not in studio  # what `docker compose up` starts
    for service in _app_services(_compose()).values():
        for port in service["ports"]:
            host_ip = port.get("host_ip") if isinstance(port, dict) else str(port).split(":")[0]
            assert host_ip == "127.0.0.1", port

    # no token in the environment (or an empty one): compose refuses the file
    for environ in ({k: v for k, v in USER_ENV.items() if k != "ONNX_STUDIO_AUTH_TOKEN"},
                    {**USER_ENV, "ONNX_STUDIO_AUTH_TOKEN": ""}):  # fmt: skip
        with pytest.raises(Unset, match="ONNX_STUDIO_AUTH_TOKEN"):
            _compose(environ)

    # the one the environment gives is the one the server asks for, in every replica
    for service in _app_services(_compose()).values():
        argv = _argv(service["command"]) if "command" in service else _image_cmd()
        values = _serve_values(argv, {**_image_env(), **_environment(service)})
        assert cli.serve_token(values) == USER_ENV["ONNX_STUDIO_AUTH_TOKEN"]


def test_an_empty_token_beyond_loopback_is_made_up_not_turned_off(capsys):
    values = _serve_values(["onnx-studio", "serve"], {**_image_env(), "ONNX_STUDIO_AUTH_TOKEN": ""})
    token = cli.serve_token(values)
    assert token and token in capsys.readouterr().out
    loopback = _serve_values(["onnx-studio", "serve", "--host", "127.0.0.1"], {})
    assert cli.serve_token(loopback) is None


def test_containers_are_given_the_time_a_graceful_stop_takes():
    from app.serving import GRACEFUL_SECONDS

    for name, service in _app_services(_compose()).items():
        grace = re.fullmatch(r"(\d+)s", str(service.get("stop_grace_period", "10s")))
        assert grace and int(grace.group(1)) > GRACEFUL_SECONDS, (name, service.get("stop_grace_period"))
