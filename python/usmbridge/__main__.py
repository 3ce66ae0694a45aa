"""python -m usmbridge: what this Python has for usmbridge's SYCL arrays.

Prints Python, numpy, dpctl and dpnp, Intel's CPU OpenCL runtime from PyPI
(intel-opencl-rt), the OpenCL ICD loader SYCL uses and the ICDs it sees,
the SYCL devices dpctl finds, and, when Intel's CPU device is missing, the
environment lines that bring it (docs/python.md, "A SYCL CPU device from PyPI").

Why the lines are printed and not set by the package: the intel-opencl-rt
wheel installs the Khronos ICD loader and libintelocl.so, but its
etc/OpenCL/vendors/intel-cpu.icd names a conda placeholder path, so the
loader finds the runtime only through OCL_ICD_FILENAMES. The loader reads
it at the process's first device enumeration, which dpctl or dpnp may do
before usmbridge is imported, and setting it at import would change the
environment of the user's process and its children.

Pure Python: it imports neither usmbridge's extension module (unless -f or
--ext asks) nor dpctl (unless it is installed, and not with --no-devices).
Exit status 0 whatever it finds.
"""
import argparse
import importlib.metadata
import importlib.util
import os
import platform
import re
import subprocess
import sys

# The distributions reported, as (name, what it is).
DISTRIBUTIONS = (
    ("numpy", "NumPy"),
    ("dpctl", "dpctl (SYCL queues, devices and USM for Python)"),
    ("dpnp", "dpnp (dpnp.tensor, USM arrays)"),
    ("intel-sycl-rt", "Intel's SYCL runtime"),
    ("intel-opencl-rt", "Intel's CPU OpenCL runtime and the Khronos ICD loader"),
)

INTEL_CPU_PLATFORM = "Intel(R) OpenCL"
DEFAULT_VENDORS = "/etc/OpenCL/vendors"


def dist_version(name):
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def dist_file(name, basename):
    """The installed path of basename among distribution name's files, or None."""
    try:
        files = importlib.metadata.files(name) or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name == basename:
            path = os.path.realpath(f.locate())
            if os.path.exists(path):
                return path
    return None


def library_dirs():
    """The directories the dynamic linker searches for a bare library name:
    LD_LIBRARY_PATH, then its cache (ldconfig -p), then the defaults."""
    dirs = [d for d in os.environ.get("LD_LIBRARY_PATH", "").split(":") if d]
    for ldconfig in ("/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"):
        try:
            out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            continue
        for line in out.splitlines():
            m = re.search(r"=>\s*(\S+)$", line)
            if m and os.path.dirname(m.group(1)) not in dirs:
                dirs.append(os.path.dirname(m.group(1)))
        break
    return dirs + [d for d in ("/lib64", "/usr/lib64", "/lib", "/usr/lib") if d not in dirs]


def resolve_library(lib, dirs):
    """The file a loader's dlopen(lib) would open, or None when there is none."""
    if os.sep in lib:
        return os.path.realpath(lib) if os.path.exists(lib) else None
    for d in dirs:
        p = os.path.join(d, lib)
        if os.path.exists(p):
            return os.path.realpath(p)
    return None


class Loader:
    """The OpenCL ICD loader SYCL's OpenCL backend loads: the Khronos loader
    of the intel-opencl-rt wheel (the SYCL runtime's libraries find it
    beside them), else the system's libOpenCL.so.1."""

    def __init__(self, dirs):
        self.path = dist_file("intel-opencl-rt", "libOpenCL.so.1")
        self.origin = "from the intel-opencl-rt wheel"
        if self.path is None:
            self.path = resolve_library("libOpenCL.so.1", dirs)
            self.origin = "the system's"
        data = b""
        if self.path:
            try:
                with open(self.path, "rb") as f:
                    data = f.read()
            except OSError:
                pass
        # Khronos' loader reads OCL_ICD_FILENAMES; ocl-icd's (Debian's
        # ocl-icd-libopencl1 2.3) does not, and sorts platforms instead.
        self.reads_filenames = b"OCL_ICD_FILENAMES" in data
        self.kind = "Khronos" if self.reads_filenames else ("ocl-icd" if b"OCL_ICD_PLATFORM_SORT" in data else "unknown")

    def icds(self):
        """The ICDs the loader would load: (where it is named, library, resolved path or None)."""
        found = []
        if self.reads_filenames:
            for lib in os.environ.get("OCL_ICD_FILENAMES", "").split(":"):
                if lib:
                    found.append(("OCL_ICD_FILENAMES", lib))
        vendors = os.environ.get("OCL_ICD_VENDORS") or DEFAULT_VENDORS
        if os.path.isdir(vendors):
            files = sorted(os.path.join(vendors, n) for n in os.listdir(vendors) if n.endswith(".icd"))
        else:
            files = [vendors] if os.path.isfile(vendors) else []
        for icd in files:
            try:
                with open(icd) as f:
                    lib = f.readline().strip()
            except OSError as e:
                lib = "(unreadable: %s)" % e
            found.append((icd, lib))
        return found


def sycl_devices():
    """dpctl.get_devices(), or the reason there are none: (devices, error)."""
    try:
        import dpctl
        return dpctl.get_devices(), None
    except Exception as e:  # an import or runtime failure is reported, not raised
        return [], "%s: %s" % (type(e).__name__, e)


def is_intel_cpu(device):
    return device.sycl_platform.name == INTEL_CPU_PLATFORM and device.device_type.name == "cpu"


def describe_device(d):
    usm = all(getattr(d, "has_aspect_usm_%s_allocations" % k) for k in ("device", "shared", "host"))
    return "%-14s %s (%s)%s" % (d.filter_string, d.name, d.sycl_platform.name,
                                "" if usm else ": no USM allocations, dpctl and usmbridge cannot use it")


def environment_fix(loader, intel_icd, icds, dirs):
    """The export lines that make the loader see Intel's CPU runtime from
    PyPI, or [] when it already does or nothing can."""
    if intel_icd is None or not loader.reads_filenames:
        return []
    for _, lib in icds:
        path = resolve_library(lib, dirs)
        if path and os.path.basename(path).startswith("libintelocl"):
            return []
    names = [n for n in os.environ.get("OCL_ICD_FILENAMES", "").split(":") if n]
    return ["export OCL_ICD_FILENAMES=%s" % ":".join([intel_icd] + names)]


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m usmbridge",
        description="Report what this Python has for usmbridge's SYCL arrays: packages, OpenCL "
                    "runtimes, SYCL devices, and the environment that brings Intel's CPU device.")
    parser.add_argument("-f", "--full", action="store_true",
                        help="also load usmbridge's extension module, and list every SYCL platform "
                             "(dpctl.lsplatform(verbosity=2))")
    parser.add_argument("--ext", action="store_true", help="load usmbridge's extension module and say from where")
    parser.add_argument("--no-devices", action="store_true",
                        help="do not import dpctl or enumerate SYCL devices")
    parser.add_argument("--env", action="store_true",
                        help="print only the export lines (none when nothing is missing), for eval")
    args = parser.parse_args(argv)

    dirs = library_dirs()
    loader = Loader(dirs)
    icds = loader.icds()
    intel_icd = dist_file("intel-opencl-rt", "libintelocl.so")
    fix = environment_fix(loader, intel_icd, icds, dirs)
    if args.env:
        for line in fix:
            print(line)
        return 0

    import usmbridge
    print("usmbridge %s (%s)" % (usmbridge.__version__, os.path.dirname(os.path.abspath(usmbridge.__file__))))
    lib = os.environ.get("USMBRIDGE_LIB")
    if lib:
        print("  extension module: %s (USMBRIDGE_LIB)" % lib)
    else:
        spec = importlib.util.find_spec("usmbridge._ext")
        print("  extension module: %s" % (spec.origin if spec else "not installed (build it: pip install .)"))
    if args.ext or args.full:
        try:
            usmbridge.Array  # loads the extension module
            print("  loaded: %s" % sys.modules["usmbridge._ext"].__file__)
        except Exception as e:
            print("  loading it failed: %s: %s" % (type(e).__name__, e))
    print("Python %s (%s) on %s" % (platform.python_version(), sys.executable, platform.platform()))
    for name, what in DISTRIBUTIONS:
        v = dist_version(name)
        print("%-16s %s" % (name, v if v else "not installed"))
    if intel_icd:
        print("Intel's CPU OpenCL runtime (intel-opencl-rt): %s" % intel_icd)
    print("OpenCL ICD loader: %s (%s, %s)" % (loader.path or "none found", loader.kind, loader.origin))
    for name in ("OCL_ICD_FILENAMES", "OCL_ICD_VENDORS", "ONEAPI_DEVICE_SELECTOR"):
        if name in os.environ:
            print("  %s=%s" % (name, os.environ[name]))
    if "OCL_ICD_VENDORS" not in os.environ:
        print("  vendors directory: %s" % DEFAULT_VENDORS)
    print("  ICDs it sees:%s" % ("" if icds else " none"))
    for where, lib in icds:
        path = resolve_library(lib, dirs)
        print("    %s: %s%s" % (where, lib, "" if path == lib else (" -> " + path if path else " (no such library)")))

    if not args.no_devices and dist_version("dpctl"):
        devices, err = sycl_devices()
        print("SYCL devices (dpctl.get_devices()):%s" % (" none" if not devices else ""))
        if err:
            print("  dpctl failed: %s" % err)
        for d in devices:
            print("  " + describe_device(d))
        if args.full and not err:
            import dpctl
            dpctl.lsplatform(verbosity=2)
        if devices and any(is_intel_cpu(d) for d in devices):
            fix = []  # the device is there, however the loader found it
    if fix:
        print("Intel's CPU device is not visible: its runtime is installed but no ICD names it. Set")
        for line in fix:
            print("  " + line)
        print("before the process's first SYCL device query (docs/python.md, \"A SYCL CPU device from PyPI\").")
    elif intel_icd is None and dist_version("dpctl"):
        print("For a SYCL CPU device: pip install intel-opencl-rt (the version of intel-sycl-rt), "
              "then run python -m usmbridge again")
    elif not dist_version("dpctl"):
        print("dpctl is not installed: usmbridge works with host memory (numpy); for SYCL devices: "
              "pip install dpctl dpnp")
    return 0


if __name__ == "__main__":
    sys.exit(main())
