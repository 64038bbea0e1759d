"""The PNG writer and the timeline picture."""

import struct
import zlib

import numpy as np

from neuronxsim.report.canvas import Canvas
from neuronxsim.report.png import encode_png, write_png
from neuronxsim.report.timeline import PALETTE, TimelineData, render_timeline


def decode_png(data: bytes) -> np.ndarray:
    """Decodes the 8-bit RGB, filter-0 PNGs encode_png writes (an independent reader for tests)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, w, h = 8, b"", None, None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, payload = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + payload) & 0xFFFFFFFF
        if kind == b"IHDR":
            w, h, depth, colour = struct.unpack(">IIBB", payload[:10])
            assert (depth, colour) == (8, 2)
        elif kind == b"IDAT":
            idat += payload
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + 3 * w)
    assert np.all(raw[:, 0] == 0)
    return raw[:, 1:].reshape(h, w, 3)


def test_png_round_trip(tmp_path):
    img = np.random.default_rng(1).integers(0, 256, (7, 13, 3), dtype=np.uint8)
    assert np.array_equal(decode_png(encode_png(img)), img)
    write_png(tmp_path / "x.png", img)
    assert [p.name for p in tmp_path.iterdir()] == ["x.png"]
    assert np.array_equal(decode_png((tmp_path / "x.png").read_bytes()), img)


def test_text_draws_glyph_pixels():
    c = Canvas(20, 12)
    c.text(0, 0, "I")
    assert (c.pixels == 0).any() and (c.pixels[:, 6:] == 255).all()


def test_timeline_shades_busy_time_in_the_kernel_colour(tmp_path):
    # Row 0 busy for the first half by kernel 0, row 1 busy for the second half by kernel 1.
    data = TimelineData(tracks=["PE", "DVE"], track_of=np.array([0, 1]), start_ns=np.array([0.0, 500.0]),
                        end_ns=np.array([500.0, 1000.0]), group_of=np.array([0, 1]), group_names=["mm", "act"])
    render_timeline(tmp_path / "t.png", data, title="test")
    img = decode_png((tmp_path / "t.png").read_bytes())
    colours = {tuple(int(v) for v in px) for px in img.reshape(-1, 3)}
    assert tuple(PALETTE[0]) in colours and tuple(PALETTE[1]) in colours
    # Find the rows: the PE row is kernel-0 coloured on the left and idle grey on the right.
    pe_rows = np.where((img == PALETTE[0]).all(axis=2).sum(axis=1) > 100)[0]
    assert len(pe_rows) > 0
    row = img[pe_rows[-1]]
    blue = np.where((row == PALETTE[0]).all(axis=1))[0]
    grey = np.where((row == (242, 242, 242)).all(axis=1))[0]
    assert blue.max() < grey.max() and blue.min() < grey.min() + 5
