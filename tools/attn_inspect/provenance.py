"""Where a report came from, from facts of this run: the command as it was typed, and the machine
and kernel variant that timed it."""
import os
import shlex


def made_by(argv):
    """The report's "Made by" line for the command line argv (sys.argv: the program as invoked,
    then its arguments)."""
    return f"Made by `{shlex.join(argv)}` (see tools/attn_inspect/README.md)."


def cpu_model(cpuinfo="/proc/cpuinfo"):
    """The CPU's model name as the OS reports it, or None where it does not."""
    try:
        with open(cpuinfo, encoding="utf-8") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "Processor") and value.strip():
                    return value.strip()
    except OSError:
        pass
    return None


def machine(kernel):
    """'2 logical CPUs (AMD EPYC 7B13), the kernel's x86-64-linux-avx2-... variant': this machine,
    as the timing next to it was measured on it."""
    count = os.cpu_count() or 0
    model = cpu_model()
    cpus = f"{count} logical CPU{'s' if count != 1 else ''}" + (f" ({model})" if model else "")
    return f"{cpus}, the kernel's {kernel.selected_target or 'unknown'} variant"
