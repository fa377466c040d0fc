"""Drawing the street map of Maps: blocks, parks, water, named streets, pins and routes."""

from __future__ import annotations

from mae.device.virtual import icons, theme
from mae.device.virtual.canvas import Canvas, DBox

LAND = "#F1F3F4"
ROAD = "#FFFFFF"
ROAD_EDGE = "#D7DBDF"
MAJOR = "#FDE293"
PARK = "#CEEAD6"
WATER = "#AECBFA"
ROUTE = "#1A73E8"
LABEL = "#3C4043"

H_STREETS = [(0.14, "University Ave"), (0.36, "Green St"), (0.58, "Springfield Ave"), (0.8, "Kirby Ave")]
V_STREETS = [(0.1, "Neil St"), (0.38, "Lincoln Ave"), (0.66, "Race St"), (0.92, "Prospect Ave")]
LAKE = [(0.7, 1.0), (0.72, 0.93), (0.79, 0.87), (0.88, 0.85), (0.95, 0.82), (1.0, 0.83), (1.0, 1.0)]
"""The lake's shore, as fractions of the map (it runs off the map's bottom right corner)."""
ORIGIN = (0.38, 0.47)
"""Where "Your location" is, as a fraction of the map."""


def base_map(c: Canvas, box: DBox, labels: bool = True) -> None:
    """Land, a park, a lake and the street grid; street names when ``labels``."""
    left, top, right, bottom = box
    w, h = right - left, bottom - top

    def at(fx: float, fy: float) -> tuple[float, float]:
        return left + fx * w, top + fy * h

    c.rect(box, LAND)
    px0, py0 = at(0.42, 0.62)
    px1, py1 = at(0.62, 0.76)
    c.rect((px0, py0, px1, py1), PARK, radius=20)
    for fy, _ in H_STREETS:
        y = top + fy * h
        major = fy in (0.36, 0.58)
        c.line([(left, y), (right, y)], ROAD_EDGE, 34 if major else 26)
        c.line([(left, y), (right, y)], MAJOR if major else ROAD, 26 if major else 18)
    for fx, _ in V_STREETS:
        x = left + fx * w
        c.line([(x, top), (x, bottom)], ROAD_EDGE, 26)
        c.line([(x, top), (x, bottom)], ROAD, 18)
    # a lake running off the map's corner, over the streets that end at its shore: an irregular shape,
    # not a round blue disc a model would take for a button
    c.polygon([at(*point) for point in LAKE], WATER)
    if not labels:
        return
    for fy, name in H_STREETS:
        y = top + fy * h
        if top + 60 < y < bottom - 10:
            c.text(left + 0.47 * w, y - 24, name, size=theme.SMALL, color=LABEL, anchor="ls")
    for index, (fx, name) in enumerate(V_STREETS[:3]):
        x = left + fx * w
        fy = 0.25 if index % 2 == 0 else 0.7
        y = top + fy * h
        c.text(x + 26, y, name, size=theme.SMALL, color=LABEL, anchor="lm")


def clamp_point(fx: float, fy: float) -> tuple[float, float]:
    return min(max(fx, 0.06), 0.94), min(max(fy, 0.08), 0.92)


def location_dot(c: Canvas, x: float, y: float) -> None:
    c.ellipse((x - 30, y - 30, x + 30, y + 30), "#FFFFFF")
    c.ellipse((x - 22, y - 22, x + 22, y + 22), ROUTE)
    c.icon_element((x - 30, y - 30, x + 30, y + 30), "your location")


def pin(c: Canvas, x: float, y: float, caption: str) -> None:
    icons.icon(c, "pin", x, y - 40, 90, "#EA4335", caption)


def route(c: Canvas, box: DBox, dest: tuple[float, float]) -> None:
    """A route along the streets from ``ORIGIN`` to ``dest`` (map fractions)."""
    left, top, right, bottom = box
    w, h = right - left, bottom - top
    fx, fy = clamp_point(*dest)
    street_x = min((s[0] for s in V_STREETS), key=lambda sx: abs(sx - fx))
    street_y = min((s[0] for s in H_STREETS), key=lambda sy: abs(sy - ORIGIN[1]))
    path = [ORIGIN, (ORIGIN[0], street_y), (street_x, street_y), (street_x, fy), (fx, fy)]
    points = [(left + px * w, top + py * h) for px, py in path]
    c.line(points, "#0D47A1", 22)
    c.line(points, ROUTE, 14)
    ox, oy = points[0]
    location_dot(c, ox, oy)
    dx, dy = points[-1]
    pin(c, dx, dy, "destination")
