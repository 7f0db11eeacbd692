# SPDX-License-Identifier: Apache-2.0
"""What a library module says when its shared library cannot be loaded
(runtime/library/bind_library.c): one sentence for the files that were
merely absent, one line with dlerror()'s reason for each file that was
there but did not load. Before, every one of the 40-odd paths tried was
a line of its own, each naming its path twice, and the one line that
mattered (a file there but broken) was lost among them."""
import re

import pytest
from conftest import run_python

STATUS = ("import cubind.cufile as m\n"
          "try:\n"
          "    m.driver_open()\n"
          "except Exception as e:\n"
          "    print(type(e).__name__)\n"
          "print(m._library_status()[1])\n")


def search(tmp_path, **env):
    """cubind.cufile's search with CUDA_HOME at tmp_path/home (nothing else
    set): (the exception's class name, the status text)."""
    r = run_python(STATUS, CUBIND_LIBCUFILE="", CUDA_HOME=str(tmp_path / "home"), CUDA_PATH="",
                   **env)
    assert r.returncode == 0, r.stderr
    name, _, text = r.stdout.partition("\n")
    return name, text.rstrip("\n")


def test_absent_files_are_counted_not_listed(tmp_path):
    name, text = search(tmp_path)
    if not text.startswith("cubind could not load"):
        pytest.skip("libcufile is on this machine's library path: nothing is missing")
    assert name == "DriverNotFoundError"
    first = text.splitlines()[0]
    paths = int(re.search(r"none of the (\d+) paths tried", first).group(1))
    assert paths >= 6, first  # lib64 and lib of CUDA_HOME, 2 names each, the system's, ...
    assert "libcufile.so.0 or libcufile.so" in first and "CUBIND_LIBCUFILE" in first
    assert "nvidia/cu13/lib or nvidia/cufile/lib" in first
    assert len(text.splitlines()) == 1, text  # no line per absent path
    assert str(tmp_path) not in text


def test_a_file_there_but_broken_is_listed_with_its_reason(tmp_path):
    lib64 = tmp_path / "home" / "lib64"
    lib64.mkdir(parents=True)
    (lib64 / "libcufile.so.0").write_bytes(b"not an ELF file")
    name, text = search(tmp_path)
    if not text.startswith("cubind could not load"):
        pytest.skip("libcufile is on this machine's library path, after the broken copy")
    lines = text.splitlines()
    assert lines[0].endswith("there but not loadable:"), text
    broken = str(lib64 / "libcufile.so.0")
    assert lines[1:] == ["  %s: %s" % (broken, lines[1].split(": ", 1)[1])], text
    assert text.count(broken) == 1, text  # dlerror's copy of the path is dropped
    assert "cannot open shared object file" not in lines[1], text


def test_the_variable_names_the_only_file(tmp_path):
    junk = tmp_path / "libcufile.so.0"
    junk.write_bytes(b"junk")
    r = run_python(STATUS, CUBIND_LIBCUFILE=str(junk))
    assert r.returncode == 0, r.stderr
    name, _, text = r.stdout.partition("\n")
    assert name == "DriverNotFoundError"
    assert text.count(str(junk)) == 1, text
    assert "CUBIND_LIBCUFILE is set" in text and "\n" not in text.strip(), text
