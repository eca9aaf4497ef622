"""Installation: `cmake --install BUILD --prefix TMP` puts hta-mpi,
hta-tracegen, hta-mpi-plot and hta-mpi-report in TMP/bin, the man page in
TMP/share/man/man1 and the hta_mpi package in TMP/lib/python3/dist-packages;
the installed programs run (--help, and a real run from generated traces to
HTML and PNG files using only installed files) and the installed package
imports.  Also: every option of src/settings/settings.h (and --help, --version) appears with its default
in `hta-mpi --help` and in the man page, and the defaults stated there are
the values a run records in the HDF5 root attributes.

libhta: its headers, libhta.so (exporting exactly the HTA_API functions
the headers declare) and libhta.a, hta.pc and the CMake package are
installed; examples/libhta/kernels.c, built against the installed library
with pkg-config and with find_package(hta), prints the same kernels as the
results file of hta-mpi for the same real trace; the installed hta_mpi
package finds the installed libhta by itself."""
import os
import re
import shutil
import subprocess

import h5py

from common import (BUILD, MPI_ENV, Skip, analyse, libhta_env, main, table, tmpdir,
                    trace_dir)

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PREFIX = SITE = None  # the installation, made by setup()
PROGRAMS = ["hta-mpi", "hta-tracegen", "hta-mpi-plot", "hta-mpi-report"]
MODULES = ["__init__", "results", "views", "plots", "report", "colours", "libhta", "runs",
           "hta_frames", "trace_analysis"]


def install():
    p = subprocess.run(["cmake", "--install", BUILD, "--prefix", PREFIX], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr


def setup():
    global PREFIX, SITE
    PREFIX = os.path.join(tmpdir(), "prefix")
    SITE = os.path.join(PREFIX, "lib", "python3", "dist-packages")
    install()


# No source-tree path may leak into the installed programs' environment.
CLEAN_ENV = {k: v for k, v in MPI_ENV.items() if k != "PYTHONPATH"}


def installed(name):
    return os.path.join(PREFIX, "bin", name)


def options_in_source():
    """{long option name: takes a value} from the HTA_SETTINGS list, with
    the command line's own --help and --version."""
    with open(os.path.join(SOURCE, "src", "settings", "settings.h")) as f:
        text = f.read()
    found = re.findall(r'^\s+[A-Z]+\([a-z_]+, ([a-z]+), "([a-z][a-z-]*)"', text, re.M)
    assert len(found) >= 20, found
    options = {name: kind != "flag" for kind, name in found}
    return dict(options, help=False, version=False)


def help_entries(text):
    """{option name: its help text including continuation lines}."""
    entries, current = {}, None
    for line in text.splitlines():
        m = re.match(r"^\s+(?:-\w, )?--([a-z-]+)", line)
        if m:
            current = m.group(1)
            entries[current] = line
        elif current and line.startswith(" " * 20):
            entries[current] += " " + line.strip()
        else:
            current = None
    return entries


def man_entries(text):
    """{option name: its .TP paragraph} from the man page's roff source."""
    entries = {}
    for block in text.split(".TP\n")[1:]:
        head = block.split("\n", 1)[0].replace("\\-", "-")
        for name in re.findall(r"--([a-z][a-z-]*)", head):
            entries[name] = block.replace("\\-", "-")
    return entries


def default_number(text, pattern):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else None


def test_files_are_in_standard_places():
    for name in PROGRAMS:
        assert os.access(installed(name), os.X_OK), name
    assert os.path.isfile(os.path.join(PREFIX, "share", "man", "man1", "hta-mpi.1"))
    for m in MODULES:
        assert os.path.isfile(os.path.join(SITE, "hta_mpi", m + ".py")), m
    assert not os.path.exists(os.path.join(SITE, "hta_mpi", "__pycache__"))


def test_installed_programs_answer_help():
    for name in PROGRAMS:
        p = subprocess.run([installed(name), "--help"], capture_output=True, text=True,
                           env=CLEAN_ENV, cwd=tmpdir(), timeout=120)
        assert p.returncode == 0 and "usage" in p.stdout.lower(), (name, p.stdout, p.stderr)
    p = subprocess.run([installed("hta-mpi"), "--version"], capture_output=True, text=True)
    assert re.fullmatch(r"hta-mpi \d+\.\d+\.\d+\n", p.stdout), p.stdout


def test_installed_module_imports_from_the_prefix():
    code = "import hta_mpi.results, hta_mpi.plots, hta_mpi.report; print(hta_mpi.plots.__file__)"
    p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                       env=dict(CLEAN_ENV, PYTHONPATH=SITE), cwd=tmpdir(), timeout=120)
    assert p.returncode == 0, p.stderr
    assert os.path.realpath(p.stdout.strip()) == os.path.realpath(
        os.path.join(SITE, "hta_mpi", "plots.py")), p.stdout


def test_installed_trace_analysis_finds_installed_hta_mpi():
    """HTA's interface from the installed package runs the installed
    hta-mpi, found on PATH."""
    traces = os.path.join(tmpdir(), "traces")
    subprocess.run([installed("hta-tracegen"), "-o", traces, "--ranks", "2", "--size-mb", "0.1"],
                   check=True, capture_output=True)
    code = ("from hta_mpi import TraceAnalysis, runs; import sys; print(runs.find_binary()); "
            "print(TraceAnalysis(trace_dir=sys.argv[1]).get_temporal_breakdown(visualize=False)"
            ".to_csv(index=False), end=\"\")")
    env = dict(CLEAN_ENV, PYTHONPATH=SITE,
               PATH=os.path.join(PREFIX, "bin") + os.pathsep + os.environ["PATH"])
    env.pop("HTA_MPI", None)
    p = subprocess.run(["/usr/bin/python3", "-c", code, traces], capture_output=True, text=True,
                       env=env, cwd=tmpdir(), timeout=300)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == installed("hta-mpi"), lines[0]
    assert "idle_time(us)" in lines[1] and len(lines) == 4, p.stdout


def test_installed_pipeline_from_traces_to_report():
    work = tmpdir()
    traces = os.path.join(work, "traces")
    for args in ([installed("hta-tracegen"), "-o", traces, "--ranks", "3", "--size-mb", "0.2"],
                 ["mpirun", "-n", "2", installed("hta-mpi"), "-q", "-o", "r.h5", traces],
                 [installed("hta-mpi-report"), "r.h5", "-o", "r.html"],
                 [installed("hta-mpi-plot"), "r.h5", "-o", "plots"]):
        p = subprocess.run(args, capture_output=True, text=True, env=CLEAN_ENV, cwd=work,
                           timeout=300)
        assert p.returncode == 0, (args, p.stdout, p.stderr)
    assert "<svg" in open(os.path.join(work, "r.html")).read()
    # 2 rank heatmaps, the ops and annotations heatmaps, timeline, kernel types
    assert len([f for f in os.listdir(os.path.join(work, "plots")) if f.endswith(".png")]) == 6


def test_pip_installs_the_package_and_its_commands():
    """python/pyproject.toml: `pip install ./python` gives hta_mpi and the
    two console commands, at the C program's version."""
    if subprocess.run(["/usr/bin/python3", "-m", "pip", "--version"],
                      capture_output=True).returncode != 0:
        raise Skip("pip is not installed (Debian package python3-pip)")
    target, work = tmpdir(), tmpdir()
    p = subprocess.run(["/usr/bin/python3", "-m", "pip", "install", "--no-deps", "--no-index",
                        "--no-build-isolation", "--target", target,
                        os.path.join(SOURCE, "python")],
                       capture_output=True, text=True, env=CLEAN_ENV, cwd=work, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    version = subprocess.run([installed("hta-mpi"), "--version"], capture_output=True,
                             text=True, env=CLEAN_ENV).stdout.split()[-1]
    assert os.path.isdir(os.path.join(target, f"hta_mpi-{version}.dist-info")), \
        (version, os.listdir(target))
    results, _ = analyse(os.path.join(SOURCE, "examples", "traces"))
    env = dict(CLEAN_ENV, PYTHONPATH=target)
    for cmd, out in (("hta-mpi-report", "r.html"), ("hta-mpi-plot", "plots")):
        p = subprocess.run([os.path.join(target, "bin", cmd), results, "-o", out],
                           capture_output=True, text=True, env=env, cwd=work, timeout=300)
        assert p.returncode == 0, (cmd, p.stdout, p.stderr)
    assert "<svg" in open(os.path.join(work, "r.html")).read()
    # 2 rank heatmaps, the ops and annotations heatmaps, timeline, kernel types
    assert len([f for f in os.listdir(os.path.join(work, "plots")) if f.endswith(".png")]) == 6


def test_help_and_man_page_list_every_option_with_its_default():
    options = options_in_source()
    helptext = subprocess.run([installed("hta-mpi"), "--help"], capture_output=True,
                              text=True).stdout
    with open(os.path.join(PREFIX, "share", "man", "man1", "hta-mpi.1")) as f:
        man = man_entries(f.read())
    assert "Options without a value are off unless given." in helptext
    entries = help_entries(helptext)
    for name, takes_value in options.items():
        assert name in entries, f"--{name} missing from --help"
        assert name in man, f"--{name} missing from the man page"
        if takes_value:
            assert "(default" in entries[name], f"--help gives no default for --{name}"
        if name not in ("help", "version"):
            assert "Default:" in man[name], f"the man page gives no default for --{name}"
    # The defaults stated are the ones a run uses (recorded in the results).
    out, _ = analyse(os.path.join(SOURCE, "examples", "traces"), extra=["-q"])
    with h5py.File(out, "r") as f:
        attrs = dict(f.attrs)
    checked = 0
    for name, takes_value in options.items():
        key = next((k for k in (name.replace("-", "_"), name.replace("-", "_") + "_us")
                    if k in attrs), None)
        if not takes_value or key is None or isinstance(attrs[key], (str, bytes)):
            continue           # --input-format, --step-regex, --sequence-op: words
        stated = (default_number(entries[name], r"\(default:? ([0-9]+(?:\.[0-9]+)?)[):]"),
                  default_number(man[name], r"Default: ([0-9]+(?:\.[0-9]+)?)"))
        assert stated == (float(attrs[key]), float(attrs[key])), (name, stated, attrs[key])
        checked += 1
    assert checked >= 10, checked


LIBRARY_FILES = ["lib/libhta.so", "lib/libhta.so.0", "lib/libhta.a", "lib/pkgconfig/hta.pc",
                 "lib/cmake/hta/htaConfig.cmake", "lib/cmake/hta/htaConfigVersion.cmake",
                 "include/hta/hta.h", "include/hta/version.h"]


def test_library_files_are_in_standard_places():
    for f in LIBRARY_FILES:
        assert os.path.exists(os.path.join(PREFIX, f)), f
    headers = os.listdir(os.path.join(PREFIX, "include", "hta"))
    assert sorted(headers) == sorted(
        [h for h in os.listdir(os.path.join(SOURCE, "include", "hta")) if h.endswith(".h")]
        + ["version.h"]), headers


def declared_api():
    """Every function include/hta/ declares with HTA_API."""
    names = set()
    folder = os.path.join(PREFIX, "include", "hta")
    for h in os.listdir(folder):
        with open(os.path.join(folder, h)) as f:
            names |= set(re.findall(r"HTA_API[^;(]*?\b(hta_\w+)\(", f.read()))
    return names


def test_shared_library_exports_exactly_the_public_api():
    p = subprocess.run(["nm", "-D", "--defined-only", os.path.join(PREFIX, "lib", "libhta.so")],
                       capture_output=True, text=True, check=True)
    exported = {line.split()[-1] for line in p.stdout.splitlines()
                if line.split()[1] in "TDBR"}
    declared = declared_api()
    assert len(declared) >= 30, declared
    assert exported == declared, (sorted(exported - declared), sorted(declared - exported))


def example_builds():
    """The example built against the installed library: with pkg-config,
    and with CMake's find_package; the two executables."""
    work = tmpdir()
    source = os.path.join(SOURCE, "examples", "libhta")
    env = dict(CLEAN_ENV, PKG_CONFIG_PATH=os.path.join(PREFIX, "lib", "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "hta"], capture_output=True,
                           text=True, env=env, check=True).stdout.split()
    libdir = subprocess.run(["pkg-config", "--variable=libdir", "hta"], capture_output=True,
                            text=True, env=env, check=True).stdout.strip()
    by_pkg_config = os.path.join(work, "kernels-pkg-config")
    subprocess.run(["cc", "-Wall", "-Wextra", "-Werror", os.path.join(source, "kernels.c"),
                    "-o", by_pkg_config] + flags + [f"-Wl,-rpath,{libdir}"],
                   check=True, env=env)
    build = os.path.join(work, "cmake")
    for args in (["cmake", "-S", source, "-B", build, f"-DCMAKE_PREFIX_PATH={PREFIX}",
                  "-DCMAKE_C_FLAGS=-Wall -Wextra -Werror"],
                 ["cmake", "--build", build]):
        p = subprocess.run(args, capture_output=True, text=True, env=CLEAN_ENV, timeout=300)
        assert p.returncode == 0, (args, p.stdout, p.stderr)
    return by_pkg_config, os.path.join(build, "kernels")


def test_example_against_the_installed_library_prints_the_results_files_kernels():
    folder = trace_dir("nccl_data")
    trace = os.path.join(folder, sorted(os.listdir(folder))[0])
    results, _ = analyse(trace, extra=["-q", "--round-like-hta"])
    kernels = table(results, "kernels").sort_values("sum_us", ascending=False, kind="stable")
    want = [(r.name, r.kernel_type, int(r.count), float(r.sum_us))
            for r in kernels.head(5).itertuples()]
    assert len(want) == 5, want
    for program in example_builds():
        p = subprocess.run([program, trace, "5", "--round-like-hta"], capture_output=True,
                           text=True, env=libhta_env(CLEAN_ENV), timeout=300)
        assert p.returncode == 0, (program, p.stderr)
        got = [(n, t, int(c), float(s)) for n, t, c, s in
               (line.split("\t") for line in p.stdout.splitlines())]
        assert got == want, (program, got, want)
        p = subprocess.run([program, trace, "--bins=none"], capture_output=True, text=True,
                           env=libhta_env(CLEAN_ENV), timeout=60)
        assert p.returncode == 2 and "--bins" in p.stderr, p.stderr


def test_installed_python_package_uses_the_installed_library():
    folder = trace_dir("alexnet")
    trace = os.path.join(folder, sorted(os.listdir(folder))[0])
    code = ("from hta_mpi import libhta; t = libhta.analyse_trace(%r); "
            "print(libhta.library()._name); print(len(t['kernels']))" % trace)
    p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True,
                       env=libhta_env(dict(CLEAN_ENV, PYTHONPATH=SITE)), cwd=tmpdir(),
                       timeout=300)
    assert p.returncode == 0, p.stderr
    path, rows = p.stdout.split()
    assert os.path.realpath(path).startswith(os.path.realpath(PREFIX) + os.sep), path
    assert int(rows) == len(table(analyse(trace, extra=["-q"])[0], "kernels"))


def test_man_page_renders():
    if not shutil.which("man"):
        raise Skip("man is not installed (Debian package man-db)")
    page = os.path.join(PREFIX, "share", "man", "man1", "hta-mpi.1")
    p = subprocess.run(["man", "--warnings", "-l", page], capture_output=True, text=True,
                       env=dict(CLEAN_ENV, MANWIDTH="80"), timeout=60)
    assert p.returncode == 0 and "timeout-per-trace" in p.stdout, p.stderr
    assert p.stderr.strip() == "", p.stderr


if __name__ == "__main__":
    main([v for k, v in sorted(globals().items()) if k.startswith("test_") and
          callable(v)], setup=setup)
