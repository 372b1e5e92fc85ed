"""A record's cost as the bench scripts read it, from a run document of
schema 5 (typed figures in ticks and one ns_per_tick) or of an older one
(flat fields): the raw figure with the interval the table prints for it,
and the figure at the run's reference speed."""


def raw(cost):
    """(ticks, [lo, hi] or None): the rounds' median with the next run's
    interval, or where there is none the rounds' own."""
    if "rounds_ticks" in cost:
        figure = cost.get("next_run_ticks") or cost["rounds_ticks"]
        return figure["value"], figure.get("ci95")
    return cost["ticks"], cost.get("run_to_run_ci95_ticks") or cost.get("ci95_ticks")


def rounds(cost):
    """(ticks, [lo, hi] or None): the rounds' median with their own
    bootstrap interval."""
    if "rounds_ticks" in cost:
        return cost["rounds_ticks"]["value"], cost["rounds_ticks"].get("ci95")
    return cost["ticks"], cost.get("ci95_ticks")


def ns(cost):
    """The raw figure in ns."""
    if "rounds_ticks" in cost:
        return cost["rounds_ticks"]["value"] * cost["ns_per_tick"]
    return cost["ns"]


def at_reference(cost):
    """(ticks, [lo, hi] or None, coefficient) at the run's reference speed,
    or None where the run read no reference for the row."""
    if "rounds_ticks" in cost:
        at = cost.get("at_reference")
        if not at:
            return None
        return at["ticks"]["value"], at["ticks"].get("ci95"), at["coefficient"]
    if cost.get("speed_normalized_ticks") is None:
        return None
    return (cost["speed_normalized_ticks"], cost.get("speed_normalized_ci95_ticks"),
            cost.get("speed_coefficient"))


def half_width_pct(value, interval):
    """The interval's wider side, percent of the value (as every "±")."""
    if interval is None or not value:
        return None
    return max(value - interval[0], interval[1] - value) / abs(value) * 100


def scale(cost, by):
    """Every figure of `cost` in ticks or ns, intervals too, times `by`, in
    place: the row as a run where it cost that much more would write it.
    The coefficient, ns_per_tick and counts are left as they are."""
    def figure(f):
        if f:
            f["value"] *= by
            if f.get("ci95"):
                f["ci95"] = [x * by for x in f["ci95"]]
    for key, value in list(cost.items()):
        if key in ("rounds_ticks", "next_run_ticks"):
            figure(value)
        elif key == "at_reference" and value:
            figure(value["ticks"])
        elif key.endswith(("_ticks", "_ns")) or key in ("ticks", "ns"):
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                cost[key] = value * by
            elif isinstance(value, list):
                cost[key] = [x * by for x in value]
