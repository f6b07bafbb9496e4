#!/usr/bin/env python3
"""clang-tidy-14 that remembers clean files: .ci/run gives it to run-clang-tidy-14 as its
-clang-tidy-binary.

clang-tidy's verdict on a file depends only on its inputs: the source, every header it includes,
the flags it is compiled with, the .clang-tidy configuration and clang-tidy itself. This wrapper
hashes exactly those (the headers from the compiler's own -M list) and, when the same inputs
were found clean before, answers clean without running the analysis, which is most of CI's
static-check CPU. Only clean verdicts are kept: a file with a finding is analysed, and reported,
every time. Anything that is not a one-file check (run-clang-tidy's -list-checks) goes straight
to clang-tidy. The cache lives in $XDG_CACHE_HOME/mqnamesrv-clang-tidy (~/.cache by default);
NS_TIDY_CACHE=0 turns it off.
"""
import hashlib
import json
import os
import pathlib
import shlex
import subprocess
import sys

TIDY = "clang-tidy-14"


def run_tidy(args):
    return subprocess.run([TIDY] + args, check=False).returncode


def compile_entry(build_dir, source):
    with open(os.path.join(build_dir, "compile_commands.json"), encoding="utf-8") as db:
        for entry in json.load(db):
            path = os.path.normpath(os.path.join(entry["directory"], entry["file"]))
            if path == source:
                return entry
    return None


def dependencies(entry):
    """The files the compiler reads for this entry (source and headers), from its -M list."""
    argv = entry.get("arguments") or shlex.split(entry["command"])
    if os.path.basename(argv[0]) == "ccache":
        argv = argv[1:]
    deps_argv, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
        elif arg not in ("-c", "-MD", "-MMD"):
            deps_argv.append(arg)
    out = subprocess.run(deps_argv + ["-M"], cwd=entry["directory"], check=True,
                         capture_output=True, text=True).stdout
    words = out.replace("\\\n", " ").split()
    files = [w for w in words[1:] if w != "\\"]  # words[0] is the "<object>:" target
    return argv, {os.path.normpath(os.path.join(entry["directory"], f)) for f in files}


def cache_key(root, entry, source):
    argv, files = dependencies(entry)
    digest = hashlib.sha256()
    version = subprocess.run([TIDY, "--version"], check=True, capture_output=True).stdout
    digest.update(version)
    # The configuration: every .clang-tidy from the source's folder up to the root.
    folder = pathlib.Path(source).parent
    while True:
        config = folder / ".clang-tidy"
        if config.is_file():
            digest.update(str(config.relative_to(root)).encode() + b"\0" + config.read_bytes())
        if folder == pathlib.Path(root) or folder == folder.parent:
            break
        folder = folder.parent
    # The flags, with the checkout's own path taken out so that another clone hits.
    for arg in argv:
        digest.update(arg.replace(root, "<root>").encode() + b"\0")
    # In the order of the names with the checkout taken out: a sort by full path would put the
    # checkout's files before /usr's in one folder and after them in another.
    for name, path in sorted((p.replace(root, "<root>"), p) for p in files):
        digest.update(name.encode() + b"\0" + pathlib.Path(path).read_bytes() + b"\0")
    return digest.hexdigest()


def main(args):
    build_dir = next((a[len("-p="):] for a in args if a.startswith("-p=")), None)
    sources = [a for a in args if not a.startswith("-") and a.endswith(".c")]
    if os.environ.get("NS_TIDY_CACHE") == "0" or build_dir is None or len(sources) != 1:
        return run_tidy(args)
    source = os.path.normpath(os.path.abspath(sources[0]))
    entry = compile_entry(os.path.abspath(build_dir), source)
    if entry is None:
        return run_tidy(args)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    key = cache_key(root, entry, source)
    cache = pathlib.Path(os.environ.get("XDG_CACHE_HOME", pathlib.Path.home() / ".cache"))
    marker = cache / "mqnamesrv-clang-tidy" / key[:2] / key
    if marker.exists():
        return 0
    result = subprocess.run([TIDY] + args, check=False, capture_output=True)
    sys.stdout.buffer.write(result.stdout)
    sys.stderr.buffer.write(result.stderr)
    # Clean means: exit 0 and no finding printed (with -quiet, clean files print none).
    output = result.stdout + result.stderr
    found = b"warning:" in output or b"error:" in output
    if result.returncode == 0 and not found:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(source.replace(root, "<root>") + "\n", encoding="utf-8")
    return result.returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
