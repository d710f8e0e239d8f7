"""Shared machinery of the IWP-SGD reproductions (paper 004, Sec. 6 and App. E).

Three methods on the same release, same order, step, batch and ridge (Sec. 6): SGD on
the clean data ("SGD real"), SGD on the release ("SGD noisy") and IWP-SGD. Replications are
run together (:func:`~privest.learn.iwp_sgd.sgd_replicated`) in groups that fit in memory.
Curves are the clean test risk against the number of batches with two aggregations:
(a) mean over runs of L(theta_t^r); (b) L(mean_r theta_t^r), the loss of the averaged model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from privest.learn.iwp_losses import plain_loss
from privest.learn.iwp_sgd import sgd_replicated
from privest.release.examples import release_examples

METHODS = {"oracle": "SGD real", "naive": "SGD noisy", "iwp": "IWP-SGD"}
COLORS = {"oracle": "tab:green", "naive": "tab:red", "iwp": "tab:blue"}


@dataclass
class Curves:
    """Histories of the three methods over all replications."""

    batches: np.ndarray | None = None
    hist: dict[str, list[np.ndarray]] = field(default_factory=lambda: {m: [] for m in METHODS})
    loss: dict[str, list[np.ndarray]] = field(default_factory=lambda: {m: [] for m in METHODS})
    acc: dict[str, list[np.ndarray]] = field(default_factory=lambda: {m: [] for m in METHODS})
    final: dict[str, list[np.ndarray]] = field(default_factory=lambda: {m: [] for m in METHODS})

    def stack(self, key: str, method: str) -> np.ndarray:
        return np.concatenate(getattr(self, key)[method], axis=1)


def clean_risk(
    history: np.ndarray, X: np.ndarray, y: np.ndarray, loss: str
) -> tuple[np.ndarray, np.ndarray]:
    """Clean test risk and accuracy of every recorded theta: history (T, G, p), X (G, m, p)."""
    T, G, _ = history.shape
    risk = np.empty((T, G))
    acc = np.empty((T, G))
    for t in range(T):  # T small; each step is one (G, m, p) @ (G, p) product
        th = history[t]
        risk[t] = plain_loss(th, X, y, loss).mean(axis=1)
        acc[t] = ((X @ th[:, :, None])[:, :, 0] * y > 0).mean(axis=1)
    return risk, acc


def run_group(
    curves: Curves,
    Xtr: np.ndarray,
    ytr: np.ndarray,
    Xte: np.ndarray,
    yte: np.ndarray,
    *,
    loss: str,
    eps_x: float,
    eps_y: float,
    delta: float,
    lam: float,
    batch_size: int,
    gamma: float,
    n_records: int,
    seed: int,
    order: int | str = "auto",
    methods: tuple[str, ...] = ("oracle", "naive", "iwp"),
) -> float:
    """Release each replication of a group (G, n, p), run the methods, store test curves."""
    G, n, p = Xtr.shape
    rel = release_examples(
        Xtr.reshape(G * n, p),
        ytr.reshape(G * n),
        epsilon_x=eps_x,
        epsilon_y=eps_y,
        delta=delta,
        bounds=(-1.0, 1.0),
        rng=seed,
    )
    Xn, yn = rel.X.reshape(G, n, p), rel.y.reshape(G, n)
    record_every = max(1, (n // batch_size) // n_records)
    for m in methods:
        data = (Xtr, ytr) if m == "oracle" else (Xn, yn)
        path = sgd_replicated(
            *data,
            method=m,
            loss=loss,
            sigma2=rel.sigma2,
            epsilon_y=eps_y,
            order=order,
            batch_size=batch_size,
            learning_rate=gamma,
            alpha=lam,
            record_every=record_every,
            averaging=None,  # the paper's settings (Sec. 6): last iterate, no projection,
            theta_radius=None,  # constant step, remainder batch dropped (A4)
            drop_last=True,
        )
        curves.batches = path.batches
        risk, acc = clean_risk(path.history, Xte, yte, loss)
        curves.hist[m].append(path.history)
        curves.loss[m].append(risk)
        curves.acc[m].append(acc)
    return rel.sigma2


def averaged_model_loss(
    curves: Curves, tests: list[tuple[np.ndarray, np.ndarray]], loss: str, method: str
) -> np.ndarray:
    """L(mean_r theta_t^r), averaged over the replications' own test sets (A11 in
    docs/iwp-sgd.md)."""
    hist = curves.stack("hist", method)  # (T, R, p)
    mean_theta = hist.mean(axis=1)
    out = np.zeros(hist.shape[0])
    for Xte, yte in tests:
        G = Xte.shape[0]
        th = np.broadcast_to(mean_theta[:, None, :], (hist.shape[0], G, hist.shape[2]))
        out += clean_risk(np.ascontiguousarray(th), Xte, yte, loss)[0].sum(axis=1)
    return out / sum(X.shape[0] for X, _ in tests)


def plot_curves(ax_pair, curves: Curves, avg: dict[str, np.ndarray], title: str, ylabel: str):
    """Panels (a) mean loss of fitted models and (b) loss of the averaged model."""
    x = curves.batches
    for m, label in METHODS.items():
        if not curves.loss[m]:
            continue
        L = curves.stack("loss", m)
        mean = L.mean(axis=1)
        se = L.std(axis=1) / math.sqrt(L.shape[1]) if L.shape[1] > 1 else 0 * mean
        ax_pair[0].plot(x, mean, color=COLORS[m], label=label)
        ax_pair[0].fill_between(x, mean - 2 * se, mean + 2 * se, color=COLORS[m], alpha=0.2)
        ax_pair[1].plot(x, avg[m], color=COLORS[m], label=label)
    ax_pair[0].set_title(f"{title}\n(a) mean loss of fitted models")
    ax_pair[1].set_title(f"{title}\n(b) loss of the averaged model")
    for ax in ax_pair:
        ax.set_xlabel("number of batches")
        ax.set_ylabel(ylabel)
        ax.legend(fontsize=8)
