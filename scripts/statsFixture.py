"""Reference values for src/core/runs/stats.test.ts, computed with numpy and scipy (Debian's python3).

Run once: python3 scripts/statsFixture.py > src/core/runs/stats.fixture.json
The estimators follow rliable (Agarwal et al. 2021): IQM = scipy.stats.trim_mean(x, 0.25) over
all scores; probability of improvement = Mann-Whitney U / (n*m) per task, averaged over tasks;
intervals = percentile stratified bootstrap.
"""
import json
import numpy as np
from scipy import stats

rng = np.random.default_rng(2021)
out = {"percentile": [], "iqm": [], "poi": [], "bootstrap": []}

for x in [[3.0, 1.0, 2.0], [0.0, 0.5, 0.25, 1.0, 0.75], list(rng.normal(size=11))]:
    for q in [0, 2.5, 25, 50, 97.5, 100]:
        out["percentile"].append({"x": x, "q": q, "value": float(np.percentile(x, q))})

for n in [1, 2, 3, 4, 5, 7, 8, 10, 13]:
    x = list(np.round(rng.uniform(size=n), 4))
    out["iqm"].append({"x": x, "value": float(stats.trim_mean(x, 0.25))})

for (n, m, k) in [(4, 4, 1), (5, 3, 1), (4, 6, 2)]:
    # Scores on a coarse grid so ties occur.
    x = np.round(rng.uniform(size=(n, k)) * 4) / 4
    y = np.round(rng.uniform(size=(m, k)) * 4) / 4
    per_task = [stats.mannwhitneyu(x[:, j], y[:, j], alternative="two-sided").statistic / (n * m) for j in range(k)]
    out["poi"].append({"x": x.tolist(), "y": y.tolist(), "value": float(np.mean(per_task))})

# Percentile-bootstrap intervals with many replicates: a Monte-Carlo reference (the test allows
# the sampling error of both sides).
for n in [10, 25]:
    x = np.round(rng.beta(2, 3, size=n), 4)
    reps = 100000
    idx = rng.integers(0, n, size=(reps, n))
    means = x[idx].mean(axis=1)
    iqms = stats.trim_mean(x[idx], 0.25, axis=1)
    out["bootstrap"].append({
        "x": x.tolist(),
        "mean": [float(x.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))],
        "iqm": [float(stats.trim_mean(x, 0.25)), float(np.percentile(iqms, 2.5)), float(np.percentile(iqms, 97.5))],
    })

print(json.dumps(out))
