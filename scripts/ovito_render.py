#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Renders frames of an nbsim trajectory with OVITO's Python module (pip install ovito), which
needs no display (its Tachyon ray tracer runs on the CPU): spheres at their own radii, coloured
by speed (one scale for all pictures), inside the walls (box_half), y up (nbsim's gravity points
along -y in the built-in scenes), one picture per chosen frame side by side.

usage: python3 scripts/ovito_render.py TRAJ OUT.png [--frames 0,6,12] [--size 360]
  TRAJ: run.nc, run.xyz or run.lammpstrj written by nbsim --dump."""
import sys


def main(argv):
    args = argv[1:]
    frames, size = None, 360
    for opt in ("--frames", "--size"):
        if opt in args:
            i = args.index(opt)
            value = args[i + 1]
            del args[i:i + 2]
            if opt == "--frames":
                frames = [int(x) for x in value.split(",")]
            else:
                size = int(value)
    if len(args) != 2:
        print(__doc__.strip().splitlines()[4], file=sys.stderr)
        return 2
    try:
        from ovito.io import import_file
        from ovito.modifiers import ColorCodingModifier
        from ovito.vis import TachyonRenderer, Viewport
        from PIL import Image
    except ImportError as e:
        print(f"ovito_render.py: {e.name} is not installed (pip install ovito)", file=sys.stderr)
        return 1
    traj, out = args
    pipeline = import_file(traj)
    if frames is None:
        last = pipeline.num_frames - 1
        frames = sorted({0, last // 2, last})

    def walls(frame, data):
        """The box as a non-periodic cell, so the walls are drawn (.nc has no cell)."""
        if data.cell is None:
            h = float(data.attributes.get("box_half", 0.0))
            if h > 0.0:
                data.create_cell([[2 * h, 0, 0, -h], [0, 2 * h, 0, -h], [0, 0, 2 * h, -h]],
                                 pbc=(False, False, False))

    pipeline.modifiers.append(walls)
    top = max(float(max(pipeline.compute(f).particles["Velocity Magnitude"][...].max(), 0.0))
              for f in frames) or 1.0
    pipeline.modifiers.append(ColorCodingModifier(property="Velocity Magnitude",
                                                  start_value=0.0, end_value=top))
    pipeline.add_to_scene()
    vp = Viewport(type=Viewport.Type.Perspective, camera_dir=(-0.9, -0.45, -1.4),
                  camera_up=(0.0, 1.0, 0.0))
    tiles = []
    for k, frame in enumerate(frames):
        vp.zoom_all()
        path = f"{out}.{k}.png"
        vp.render_image(size=(size, size), filename=path, frame=frame,
                        renderer=TachyonRenderer(ambient_occlusion=False, shadows=False))
        tiles.append(Image.open(path).convert("RGB"))
    strip = Image.new("RGB", (size * len(tiles), size), "white")
    for k, tile in enumerate(tiles):
        strip.paste(tile, (k * size, 0))
    strip = strip.quantize(colors=256)  # a small PNG for the README
    strip.save(out, optimize=True)
    import os
    for k in range(len(tiles)):
        os.remove(f"{out}.{k}.png")
    print(f"ovito_render: frames {frames} of {traj} -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
