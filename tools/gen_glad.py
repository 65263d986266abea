#!/usr/bin/env python3
"""Generates the GL ES 3.0 loader with Debian's python3-glad (offline,
--reproducible) and flattens it into OUTDIR as gles2.c, gles2.h and
khrplatform.h, so the build needs no generated subfolders.

Usage: gen_glad.py GLAD OUTDIR"""
import os
import shutil
import subprocess
import sys
import tempfile

EXTENSIONS = [
    "GL_KHR_parallel_shader_compile",
    "GL_EXT_color_buffer_float",
    "GL_EXT_color_buffer_half_float",
    "GL_KHR_robustness",
    "GL_EXT_robustness",
]


def main():
    glad, outdir = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([glad, "--reproducible", "--quiet", "--api", "gles2=3.0",
                        "--extensions", ",".join(EXTENSIONS), "--out-path", tmp, "c"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        def copy(src, dst, fix):
            with open(os.path.join(tmp, src), encoding="utf-8") as f:
                text = f.read()
            for a, b in fix:
                text = text.replace(a, b)
            with open(os.path.join(outdir, dst), "w", encoding="utf-8") as f:
                f.write(text)
        copy("src/gles2.c", "gles2.c", [("#include <glad/gles2.h>", '#include "gles2.h"')])
        copy("include/glad/gles2.h", "gles2.h",
             [("#include <KHR/khrplatform.h>", '#include "khrplatform.h"')])
        copy("include/KHR/khrplatform.h", "khrplatform.h", [])


if __name__ == "__main__":
    main()
