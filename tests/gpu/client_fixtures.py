# SPDX-License-Identifier: Apache-2.0
"""What client libraries' installed test suites need on the GPU machine
beyond the bindings (scripts/gpu/clients.sh loads this as a pytest plugin,
`-p client_fixtures`, before the client is imported): fixtures their
source repository's conftest.py defines and their wheels do not ship, and
aliases the machine's package versions lack. Both apply to cuda.bindings
and cubind runs alike.

numpy 2.x removed `numpy.row_stack` (an alias of `numpy.vstack`), which
numba-cuda 0.30 reads when it registers its array functions: without it
every test that compiles a kernel fails on import, whatever the bindings.
The alias is put back when absent.

numba-cuda: every CUDATestCase asks for the class-scoped fixture
`initialize_from_pytest_config`, which copies the repository's
`--dump-failed-filechecks` option onto the test class. Here the option does
not exist, so the class gets False: a failed FileCheck is reported, with no
reproducer written."""
import numpy
import pytest

if not hasattr(numpy, "row_stack"):
    numpy.row_stack = numpy.vstack


@pytest.fixture(scope="class")
def initialize_from_pytest_config(request):
    if request.cls is not None:
        request.cls._dump_failed_filechecks = False
