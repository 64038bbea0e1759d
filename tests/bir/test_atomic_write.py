"""bir.atomic_write_bytes (behind bir.save, the trace cache and the compiled kernels a lowered
module names): a failure names the file the caller asked for, not the temporary file beside it
nor nothing (a full disk's ENOSPC carries no file name of its own)."""

import errno
import os

import pytest

from neuronxsim import bir


def test_a_folder_that_cannot_hold_the_file_names_the_file(tmp_path):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    target = blocker / "module.json"
    with pytest.raises(OSError) as e:
        bir.atomic_write_bytes(target, b"{}")
    assert e.value.filename == str(target) and e.value.errno == errno.ENOTDIR


def test_a_failed_write_names_the_file_and_leaves_no_temporary(tmp_path, monkeypatch):
    def full_disk(fd, *args, **kwargs):
        class Full:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                os.close(fd)
                return False

            def write(self, data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return Full()
    monkeypatch.setattr(os, "fdopen", full_disk)
    target = tmp_path / "module.json"
    with pytest.raises(OSError) as e:
        bir.atomic_write_bytes(target, b"{}")
    assert e.value.filename == str(target) and e.value.errno == errno.ENOSPC
    assert os.listdir(tmp_path) == []
