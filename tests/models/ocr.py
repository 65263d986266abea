"""PaddleOCR's pipeline around texel's runs, for tests/ocr_test.sh and
bench/precision.sh: a page of known text set in Debian darknet's glyph images
(/usr/share/darknet/data/labels/CODE_SIZE.png, the letters darknet draws its
labels with), the text boxes from the detector's probability map, the crops
the recognizer and the direction classifier take, and the CTC decoding of the
recognizer's output. numpy only (no PIL / OpenCV on the build machine).

  ocr.py page OUT.pgm                  the page (384x288) and its lines as JSON
  ocr.py boxes PROB.npy                the detector's boxes as JSON
  ocr.py crop PAGE.pgm BOXES.json DIR  rec_K.npy, cls_K.npy, cls_K_flip.npy per box
  ocr.py text REC.npy KEYS.txt         the recognizer's text
  ocr.py direction CLS.npy             "0 P" or "180 P" (label, probability)
"""
import json
import struct
import sys
import zlib

import numpy as np

GLYPHS = "/usr/share/darknet/data/labels"
PAGE_W, PAGE_H = 384, 288
# (text, glyph size 0..7, x, y): two lines of different sizes, mixed case,
# digits and punctuation, in the detector's input size (no resize).
LINES = [("Texel reads 2026", 2, 36, 64), ("WebGL2 or CPU, in C.", 1, 60, 180)]
REC_H, CLS_H, CLS_W = 48, 48, 192


def read_png(path):
    """An 8-bit grayscale, non-interlaced PNG (what darknet's glyphs are)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: not a PNG" % path)
    pos, idat, w, h = 8, b"", 0, 0
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or ctype != 0 or interlace:
                raise ValueError("%s: not 8-bit grayscale non-interlaced" % path)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, w + 1).astype(np.int32)
    out = np.zeros((h, w), np.int32)
    prev = np.zeros(w, np.int32)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:]
        cur = np.zeros(w, np.int32)
        for x in range(w):
            a = cur[x - 1] if x else 0
            b = prev[x]
            c = prev[x - 1] if x else 0
            if f == 0:
                p = 0
            elif f == 1:
                p = a
            elif f == 2:
                p = b
            elif f == 3:
                p = (a + b) // 2
            else:  # Paeth
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[x] = (line[x] + p) & 255
        out[y] = cur
        prev = cur
    return out.astype(np.uint8)


def page(out):
    img = np.full((PAGE_H, PAGE_W), 255, np.uint8)
    lines = []
    for text, size, x0, y0 in LINES:
        x, h = x0, 0
        for ch in text:
            if ch == " ":  # its glyph is not grayscale: half an n's width
                x += read_png("%s/%d_%d.png" % (GLYPHS, ord("n"), size)).shape[1] // 2
                continue
            g = read_png("%s/%d_%d.png" % (GLYPHS, ord(ch), size))
            gh, gw = g.shape
            img[y0 : y0 + gh, x : x + gw] = np.minimum(img[y0 : y0 + gh, x : x + gw], g)
            x, h = x + gw, max(h, gh)
        lines.append({"text": text, "box": [x0, y0, x, y0 + h]})
    with open(out, "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (PAGE_W, PAGE_H) + img.tobytes())
    return lines


def read_pgm(path):
    data = open(path, "rb").read()
    head = data.split(b"\n", 3)
    w, h = map(int, head[1].split())
    return np.frombuffer(head[3], np.uint8)[: w * h].reshape(h, w)


def boxes(prob, thresh=0.3, min_area=16, unclip=1.5):
    """DBNet's post-processing, axis-aligned: the connected regions of
    prob > thresh, each grown by area * unclip / perimeter on every side (the
    detector predicts shrunk text kernels), as [x0, y0, x1, y1] with x1, y1
    exclusive, top to bottom."""
    m = prob > thresh
    seen = np.zeros_like(m)
    h, w = m.shape
    out = []
    for y, x in zip(*np.nonzero(m)):
        if seen[y, x]:
            continue
        stack, pts = [(y, x)], []
        seen[y, x] = True
        while stack:
            cy, cx = stack.pop()
            pts.append((cy, cx))
            for ny, nx in ((cy - 1, cx), (cy + 1, cx), (cy, cx - 1), (cy, cx + 1)):
                if 0 <= ny < h and 0 <= nx < w and m[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    stack.append((ny, nx))
        if len(pts) < min_area:
            continue
        ys, xs = np.array(pts).T
        x0, y0, x1, y1 = xs.min(), ys.min(), xs.max() + 1, ys.max() + 1
        bw, bh = x1 - x0, y1 - y0
        d = bw * bh * unclip / (2.0 * (bw + bh))
        out.append([max(0, int(round(x0 - d))), max(0, int(round(y0 - d))),
                    min(w, int(round(x1 + d))), min(h, int(round(y1 + d)))])
    return sorted(out, key=lambda b: (b[1], b[0]))


def resize(img, h, w):
    """Bilinear, pixel centres aligned (cv2.INTER_LINEAR's convention)."""
    ih, iw = img.shape
    ys = np.clip((np.arange(h) + 0.5) * ih / h - 0.5, 0, ih - 1)
    xs = np.clip((np.arange(w) + 0.5) * iw / w - 0.5, 0, iw - 1)
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, ih - 1), np.minimum(x0 + 1, iw - 1)
    fy, fx = (ys - y0)[:, None], (xs - x0)[None, :]
    f = img.astype(np.float32)
    top = f[y0][:, x0] * (1 - fx) + f[y0][:, x1] * fx
    bot = f[y1][:, x0] * (1 - fx) + f[y1][:, x1] * fx
    return top * (1 - fy) + bot * fy


def chw(gray):
    """PaddleOCR's rec / cls normalization, (x / 255 - 0.5) / 0.5, as [1, 3, H, W]."""
    x = (gray / 255.0 - 0.5) / 0.5
    return np.ascontiguousarray(np.broadcast_to(x, (1, 3) + x.shape), np.float32)


def crops(pg, bxs, d):
    for k, (x0, y0, x1, y1) in enumerate(bxs):
        c = pg[y0:y1, x0:x1]
        # rec: height 48, the width the aspect ratio gives (a multiple of 4)
        rw = max(4, int(round(REC_H * c.shape[1] / c.shape[0] / 4.0)) * 4)
        np.save("%s/rec_%d.npy" % (d, k), chw(resize(c, REC_H, rw)))
        # cls: height 48, width up to 192, the rest zeros (PaddleOCR's padding)
        cw = min(CLS_W, max(1, int(round(CLS_H * c.shape[1] / c.shape[0]))))
        for name, g in (("cls_%d", c), ("cls_%d_flip", c[::-1, ::-1])):
            x = np.zeros((1, 3, CLS_H, CLS_W), np.float32)
            x[:, :, :, :cw] = chw(resize(g, CLS_H, cw))
            np.save("%s/%s.npy" % (d, name % k), x)


def text(logits, keys):
    """Greedy CTC: argmax per step, repeats merged, blanks (class 0) dropped.
    Class k >= 1 is line k of the keys file, the last class a space."""
    chars = [""] + [l.rstrip("\n") for l in open(keys, encoding="utf-8")] + [" "]
    best = logits.reshape(logits.shape[-2], logits.shape[-1]).argmax(1)
    out, prev = [], 0
    for i in best:
        if i != prev and i != 0:
            out.append(chars[i])
        prev = i
    return "".join(out)


def main(argv):
    cmd = argv[1]
    if cmd == "page":
        print(json.dumps(page(argv[2])))
    elif cmd == "boxes":
        p = np.load(argv[2])
        print(json.dumps(boxes(p.reshape(p.shape[-2], p.shape[-1]))))
    elif cmd == "crop":
        crops(read_pgm(argv[2]), json.load(open(argv[3])), argv[4])
    elif cmd == "text":
        print(text(np.load(argv[2]), argv[3]))
    elif cmd == "direction":
        p = np.load(argv[2]).reshape(-1)
        print("%s %.4f" % (("0", "180")[int(p.argmax())], p.max()))
    else:
        sys.exit("ocr.py: unknown command %s" % cmd)


if __name__ == "__main__":
    main(sys.argv)
