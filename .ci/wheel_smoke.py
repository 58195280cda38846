"""Build the wheel, install it in a fresh virtual environment, and serve from an empty folder.

The check that ``pip install .`` (not editable) gives a working ``quizapp``: the wheel must carry
the migrations, the bundled course, the templates and static files.  Steps:

1. copy the source tree (without caches, builds and ``.git``) to a temporary folder and build the
   wheel there with ``pip wheel --no-deps`` (the build backend comes from the package registry,
   as for any ``pip install .``);
2. check the wheel holds every file of ``quizapp/``, ``migrations/`` and ``exercises/`` (as
   ``quizapp/migrations/...`` and ``quizapp/exercises/...``), ``py.typed`` and the LICENSE;
3. create a fresh virtual environment and install the wheel with its dependencies
   (``--offline``: a virtual environment that sees this interpreter's packages, and the wheel
   installed with ``--no-deps``, so no download is needed beyond the build backend);
4. in an empty folder, with no quizapp setting in the environment, run ``quizapp serve`` on a
   free loopback port, wait for ``GET /login`` to answer 200 with the sign-in form, and check
   the server migrated its database in ``./instance`` and synced the course shipped in the wheel.

Prints what it did; exits 1 with the reason (and the server's log) on any failure.  Run by
``.ci/run`` and by ``tests/test_packaging.py`` (with ``--offline``).
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
#: Not part of a source tree: left out of the copy the wheel is built from.
IGNORED = (".git", "build", "dist", "*.egg-info", "__pycache__", "instance", "test-output",
           ".venv", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".hypothesis", "*.sqlite")  # fmt: skip
#: Folders whose every file the wheel must ship, and where (inside the wheel).
SHIPPED = {
    "quizapp": "quizapp",
    "migrations": "quizapp/migrations",
    "exercises": "quizapp/exercises",
}
#: Settings that would make the server use something other than its defaults.
CLEARED_ENV = ("PYTHONPATH", "DATABASE_URL", "QUIZAPP_EXERCISES", "QUIZAPP_INSTANCE",
               "QUIZAPP_SECRET_KEY", "QUIZAPP_SEED_SECRET", "VIRTUAL_ENV", "PYTHONHOME")  # fmt: skip


class SmokeError(Exception):
    """A step failed; the message says which and why."""


def run(cmd: list[str], **kwargs: object) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    if done.returncode != 0:
        raise SmokeError(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return str(done.stdout)


def source_files(folder: Path) -> set[str]:
    """Paths (relative to ``folder``) of the files a wheel must ship from it."""
    out = set()
    for path in folder.rglob("*"):
        rel = path.relative_to(folder)
        ignored = any(fnmatch.fnmatch(part, pat) for part in rel.parts for pat in IGNORED)
        if path.is_file() and not ignored:
            out.add(rel.as_posix())
    return out


def build_wheel(work: Path) -> Path:
    tree = work / "src"
    shutil.copytree(REPO, tree, ignore=shutil.ignore_patterns(*IGNORED))
    dist = work / "dist"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(tree)])
    wheels = sorted(dist.glob("quizapp-*.whl"))
    if len(wheels) != 1:
        raise SmokeError(f"expected one quizapp wheel in {dist}, found {wheels}")
    print(f"built {wheels[0].name}")
    return wheels[0]


def check_wheel(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = []
    for folder, inside in SHIPPED.items():
        missing += [f"{inside}/{rel}" for rel in sorted(source_files(REPO / folder))
                    if f"{inside}/{rel}" not in names]  # fmt: skip
    for required in ("quizapp/py.typed",):
        if required not in names:
            missing.append(required)
    if not any(n.endswith(".dist-info/licenses/LICENSE") or n.endswith(".dist-info/LICENSE")
               for n in names):  # fmt: skip
        missing.append("<dist-info>/LICENSE")
    if missing:
        raise SmokeError("the wheel lacks: " + ", ".join(missing[:20]))
    print(f"the wheel ships all {len(names)} files (package, migrations, course, LICENSE)")


def install(wheel: Path, work: Path, offline: bool) -> Path:
    venv = work / "venv"
    run([sys.executable, "-m", "venv", *(["--system-site-packages"] if offline else []), str(venv)])
    python = venv / "bin" / "python"
    # Offline, the environment sees this interpreter's packages, which may hold quizapp itself
    # (an editable install of a checkout): without --force-reinstall pip would find it
    # "already satisfied" and install nothing.  No PYTHONPATH either (a checkout on it too).
    env = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    flags = ["--no-deps", "--force-reinstall"] if offline else []
    run([str(python), "-m", "pip", "install", "-q", *flags, str(wheel)], env=env)
    return venv


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_from_empty_folder(venv: Path, work: Path, timeout: float) -> None:
    empty = work / "empty"
    empty.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in CLEARED_ENV}
    where = run([str(venv / "bin" / "python"), "-c", "import quizapp; print(quizapp.__file__)"],
                cwd=empty, env=env).strip()  # fmt: skip
    package = Path(where).parent
    if venv not in package.parents:
        raise SmokeError(f"quizapp was imported from {package}, not from the virtual environment")
    port = free_port()
    log_path = work / "serve.log"
    with log_path.open("w") as log:
        proc = subprocess.Popen(
            [str(venv / "bin" / "quizapp"), "serve", "--port", str(port), "--workers", "1"],
            cwd=empty, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + timeout
        status, body = 0, ""
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SmokeError(f"quizapp serve exited {proc.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/login", timeout=5) as resp:
                    status, body = resp.status, resp.read().decode()
                break
            except OSError:
                time.sleep(0.5)
        if status != 200 or 'name="password"' not in body:
            raise SmokeError(f"GET /login did not answer 200 with the sign-in form (got {status})")
        log = log_path.read_text()
        synced = f"Synced {package / 'exercises'}: "
        if synced not in log or " 0 errors" not in log:
            raise SmokeError(f"the server did not sync the course shipped in the wheel ({synced})")
        if not (empty / "instance" / "quizapp.sqlite").is_file():
            raise SmokeError("no database was created in ./instance")
        print(
            f"quizapp serve from an empty folder answers /login (port {port}); {log.splitlines()[0]}"
        )
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offline", action="store_true",
                        help="reuse this interpreter's packages instead of installing dependencies")  # fmt: skip
    parser.add_argument("--timeout", type=float, default=90.0, help="seconds to wait for /login")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="quizapp-wheel-") as tmp:
        work = Path(tmp)
        try:
            wheel = build_wheel(work)
            check_wheel(wheel)
            venv = install(wheel, work, args.offline)
            serve_from_empty_folder(venv, work, args.timeout)
        except SmokeError as err:
            print(f"wheel smoke check FAILED: {err}", file=sys.stderr)
            log = work / "serve.log"
            if log.is_file():
                print("--- server log ---\n" + log.read_text()[-4000:], file=sys.stderr)
            return 1
    print("wheel smoke check passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
