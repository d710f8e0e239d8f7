"""``privest model eptr-ols|eptr-bayes|eptr-nw``: output, guarantee, errors (exit status 2)."""

import json

import numpy as np
import pandas as pd
import pytest

import privest as pv
from privest.cli import main


@pytest.fixture
def csv(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 2))
    y = X @ [0.5, -0.2] + rng.standard_normal(3000)
    lab = np.where(X[:, 0] + 0.3 * rng.standard_normal(3000) > 0, "yes", "no")
    path = tmp_path / "d.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y, "label": lab}).to_csv(path, index=False)
    return str(path)


def test_ols_prints_estimate_and_guarantee(csv, capsys):
    rc = main(
        [
            "model",
            "--clip",
            "eptr-ols",
            csv,
            "--target",
            "y",
            "--features",
            "a,b",
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
            "--x-radius",
            "4",
            "--theta-radius",
            "1",
            "--c0",
            "0.3",
            "--seed",
            "1",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "eptr-ols: released" in out and "(1, 1e-06)-DP" in out
    assert "a" in out and "are projected onto them" in out


def test_no_count_of_projected_records_is_printed(tmp_path, capsys):
    """How many records were projected depends on the data; the CLI never prints it."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((2000, 2))
    X[:37] *= 50.0  # 37 rows outside --x-radius 4
    y = X @ [0.5, -0.2] + rng.standard_normal(2000)
    path = tmp_path / "big.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y}).to_csv(path, index=False)
    args = [
        "model",
        "eptr-ols",
        "--clip",
        str(path),
        "--target",
        "y",
        "--epsilon",
        "1",
        "--delta",
        "0.01",
    ]
    rc = main(args + ["--x-radius", "4", "--theta-radius", "1", "--c0", "0.05", "--seed", "3"])
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "projected" in line]
    assert rc == 0 and lines and not any(c.isdigit() for line in lines for c in line)
    assert "not private" not in out


def test_same_seed_same_output(csv, capsys):
    args = [
        "model",
        "--clip",
        "eptr-ols",
        csv,
        "--target",
        "y",
        "--features",
        "a,b",
        "--epsilon",
        "2",
        "--delta",
        "0.01",
        "--x-radius",
        "4",
        "--theta-radius",
        "1",
        "--c0",
        "0.3",
        "--seed",
        "5",
    ]
    main(args)
    first = capsys.readouterr().out
    main(args)
    assert capsys.readouterr().out == first


def test_bayes_and_not_released_message(csv, capsys):
    rc = main(
        [
            "model",
            "--clip",
            "eptr-bayes",
            csv,
            "--target",
            "label",
            "--features",
            "a,b",
            "--classes",
            "no,yes",
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
            "--x-radius",
            "4",
            "--c0",
            "0.1",
            "--seed",
            "2",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "eptr-bayes: released" in out and "yes" in out
    # c0 close to the smallest class share: the safety test fails and nothing is released
    rc = main(
        [
            "model",
            "--clip",
            "eptr-bayes",
            csv,
            "--target",
            "label",
            "--features",
            "a,b",
            "--classes",
            "no,yes",
            "--epsilon",
            "1",
            "--delta",
            "1e-6",
            "--x-radius",
            "4",
            "--c0",
            "0.49",
            "--seed",
            "2",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "Nothing was released" in out and "bottom" in out


def test_nw_query_points(csv, capsys):
    rc = main(
        [
            "model",
            "--clip",
            "eptr-nw",
            csv,
            "--target",
            "y",
            "--features",
            "a",
            "--epsilon",
            "2",
            "--delta",
            "1e-6",
            "--bounds=-3:3",
            "--query=-0.5,0.5",
            "--bandwidth",
            "0.3",
            "--y-radius",
            "3",
            "--c0",
            "0.05",
            "--seed",
            "3",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "-0.5" in out and "guarantee: (2, 1e-06)-DP" in out


@pytest.mark.parametrize(
    ("extra", "msg"),
    [
        (["--x-radius", "4"], "needs the public parameters"),
        (["--x-radius", "4", "--theta-radius", "1", "--c0", "0.3", "--target", "zz"], "--target"),
        (
            ["--x-radius", "4", "--theta-radius", "1", "--c0", "0.3", "--features", "q"],
            "--features",
        ),
        (["--x-radius", "-4", "--theta-radius", "1", "--c0", "0.3"], "x_radius"),
    ],
)
def test_errors_exit_2_with_one_line(csv, capsys, extra, msg):
    base = ["model", "eptr-ols", "--clip", csv, "--epsilon", "1", "--delta", "0.01"]
    if "--target" not in extra:
        base += ["--target", "y"]
    rc = main(base + extra)
    err = capsys.readouterr().err
    assert rc == 2 and msg in err and err.count("\n") == 1


def _model_args(csv, method, *extra):
    target = ["--target", "label", "--classes", "no,yes"] if method == "eptr-bayes" else []
    target = target or ["--target", "y"]
    return ["model", method, "--clip", csv, *target, "--features", "a,b", *extra]


def test_c0_auto_and_y_radius_reach_the_models(csv):
    from privest.cli import build_parser
    from privest.commands.model import _build

    common = ["--epsilon", "1", "--delta", "1e-6", "--x-radius", "4", "--c0", "auto"]
    ols = build_parser().parse_args(
        _model_args(csv, "eptr-ols", *common, "--theta-radius", "1", "--y-radius", "2.5")
    )
    model = _build(ols, None, 2)
    assert model.c0 == "auto" and model.y_radius == 2.5
    bayes = build_parser().parse_args(_model_args(csv, "eptr-bayes", *common, "--bounds=-3:3"))
    model = _build(bayes, None, 2)
    assert model.c0 == "auto" and model.bounds == (-3.0, 3.0)
    # without --y-radius / --bounds: the models' defaults (R_x R_theta; no centring)
    plain = build_parser().parse_args(_model_args(csv, "eptr-ols", *common, "--theta-radius", "1"))
    assert _build(plain, None, 2).y_radius is None
    bayes = build_parser().parse_args(_model_args(csv, "eptr-bayes", *common))
    assert _build(bayes, None, 2).bounds is None


def test_c0_defaults_to_auto_as_in_the_classes(csv):
    """Without --c0, eptr-ols and eptr-bayes get the classes' default c0='auto'; a given
    number still reaches the model."""
    from privest.cli import build_parser
    from privest.commands.model import _build
    from privest.models.eptr_bayes import EPTRBayesClassifier
    from privest.models.eptr_ols import EPTRLinearRegression

    assert EPTRBayesClassifier().c0 == EPTRLinearRegression().c0 == "auto"
    common = ["--epsilon", "1", "--delta", "1e-6", "--x-radius", "4"]
    ols = _model_args(csv, "eptr-ols", *common, "--theta-radius", "1")
    bayes = _model_args(csv, "eptr-bayes", *common)
    for args in (ols, bayes):
        assert _build(build_parser().parse_args(args), None, 2).c0 == "auto"
        assert _build(build_parser().parse_args([*args, "--c0", "0.2"]), None, 2).c0 == 0.2


def test_nw_c0_defaults_to_the_class_default(csv):
    """Without --c0, eptr-nw gets EPTRKernelRegressor's default c0; a given number, or
    'auto' (refused by name: nw has no private choice of c0), still reaches the build."""
    from privest.cli import build_parser
    from privest.commands.model import _build
    from privest.models.eptr_nw import EPTRKernelRegressor

    nw = _model_args(csv, "eptr-nw", "--epsilon", "1", "--delta", "1e-6", "--query=0,0")
    nw += ["--bandwidth", "0.3", "--y-radius", "3"]
    default = EPTRKernelRegressor().c0
    assert isinstance(default, float) and default > 0
    assert _build(build_parser().parse_args(nw), None, 2).c0 == default
    assert _build(build_parser().parse_args([*nw, "--c0", "0.05"]), None, 2).c0 == 0.05
    with pytest.raises(pv.ValidationError, match="--c0"):
        _build(build_parser().parse_args([*nw, "--c0", "auto"]), None, 2)


def test_nw_without_c0_runs(csv, capsys):
    extra = ["--epsilon", "2", "--delta", "1e-6", "--bounds=-3:3", "--query=0,0;1,1"]
    extra += ["--bandwidth", "0.5", "--y-radius", "4", "--seed", "1"]
    assert main(_model_args(csv, "eptr-nw", *extra)) == 0
    assert "eptr-nw" in capsys.readouterr().out


def test_bayes_without_c0_releases(csv, capsys):
    extra = ["--epsilon", "1", "--delta", "1e-6", "--x-radius", "4", "--bounds=-3:3"]
    assert main(_model_args(csv, "eptr-bayes", *extra, "--seed", "2")) == 0
    out = capsys.readouterr().out
    assert "eptr-bayes: released" in out and "c0 chosen privately" in out


def test_ols_with_c0_auto_releases_and_states_the_chosen_c0(csv, capsys):
    extra = ["--epsilon", "2", "--delta", "1e-6", "--x-radius", "4", "--theta-radius", "1"]
    extra += ["--y-radius", "4", "--c0", "auto", "--seed", "1"]
    assert main(_model_args(csv, "eptr-ols", *extra)) == 0
    out = capsys.readouterr().out
    assert "eptr-ols: released" in out and "c0 chosen privately: 0." in out
    assert "|y| <= y_radius" in out


def test_bayes_with_c0_auto_and_bounds_releases(csv, capsys):
    extra = ["--epsilon", "1", "--delta", "1e-6", "--x-radius", "4", "--bounds=-3:3"]
    assert main(_model_args(csv, "eptr-bayes", *extra, "--c0", "auto", "--seed", "2")) == 0
    out = capsys.readouterr().out
    assert "eptr-bayes: released" in out and "c0 chosen privately" in out


def test_c0_auto_bottom_up_front_says_why_in_the_output(csv, capsys):
    """At a tiny epsilon no c0 can beat the bottom: the CLI says why (the model's
    NothingReleasedWarning, shown as text, not as a Python warning) and prints no noise sd."""
    extra = ["--epsilon", "0.01", "--delta", "1e-6", "--x-radius", "4", "--theta-radius", "1"]
    assert main(_model_args(csv, "eptr-ols", *extra, "--c0", "auto", "--seed", "1")) == 0
    cap = capsys.readouterr()
    assert "Nothing was released by eptr-ols" in cap.out and "lambda_min" in cap.out
    assert "bottom was output up front" in cap.out and "Warning" not in cap.err


def test_c0_refusals(csv, capsys):
    args = ["model", "eptr-nw", csv, "--target", "y", "--features", "a", "--epsilon", "1"]
    args += ["--delta", "1e-6", "--query", "0", "--bandwidth", "0.3", "--y-radius", "3"]
    assert main([*args, "--bounds=-3:3", "--c0", "auto"]) == 2
    assert "'auto' is for eptr-ols and eptr-bayes" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:  # argparse refuses it
        main(_model_args(csv, "eptr-ols", "--epsilon", "1", "--delta", "0.01", "--c0", "xyz"))
    assert exc.value.code == 2 and "neither a number nor 'auto'" in capsys.readouterr().err


def test_linear_and_logistic_are_the_recommended_methods(tmp_path, capsys):
    rng = np.random.default_rng(5)
    X = rng.uniform(-3, 3, (20_000, 2))
    y = np.clip(X @ [0.5, -0.3] + 0.5 * rng.normal(size=20_000), -3, 3)
    pd.DataFrame({"x1": X[:, 0], "x2": X[:, 1], "y": y, "label": (y > 0).astype(int)}).to_csv(
        tmp_path / "d.csv", index=False
    )
    base = ["model", "linear", str(tmp_path / "d.csv"), "--target", "y", "--features", "x1,x2"]
    base += ["--epsilon", "1", "--delta", "1e-6", "--bounds=-3:3", "--seed", "3"]
    assert main([*base, "--y-bounds=-3:3", "-o", str(tmp_path / "lin.csv")]) == 0
    lin = pd.read_csv(tmp_path / "lin.csv").set_index("feature").coefficient
    # 20,000 rows at eps 1: AdaSSP is within a few hundredths of the truth
    assert lin["x1"] == pytest.approx(0.5, abs=0.05) and lin["x2"] == pytest.approx(-0.3, abs=0.05)
    assert "(intercept)" in lin.index
    assert main(base) == 2  # --y-bounds is required for linear
    assert "--y-bounds" in capsys.readouterr().err
    logit = [*base, "--classes", "0,1", "-o", str(tmp_path / "log.csv")]
    logit[1], logit[4] = "logistic", "label"
    assert main(logit) == 0
    coef = pd.read_csv(tmp_path / "log.csv").set_index("feature").coefficient
    assert coef["x1"] > 0 > coef["x2"]  # the signs of the true model
    assert "method noisy_mm" in capsys.readouterr().out  # the default since issue 31


def _bayes_data(tmp_path):
    """Two features on the public box [0, 4] (centre 2, not 0), two classes."""
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 4, (4000, 2))
    lab = np.where(X[:, 0] + 0.5 * rng.standard_normal(4000) > 2, "yes", "no")
    path = tmp_path / "box.csv"
    pd.DataFrame({"a": X[:, 0], "b_2": X[:, 1], "label": lab}).to_csv(path, index=False)
    return str(path), X, lab


_BAYES = ["--target", "label", "--features", "a,b_2", "--classes", "no,yes", "--epsilon", "2"]
_BAYES += ["--delta", "1e-6", "--x-radius", "3", "--bounds", "0:4", "--clip", "--seed", "4"]


def _bayes_class(inference):
    """The classifier the command builds from _BAYES (seed 4: the same noise)."""
    from privest.rng import make_rng

    return pv.EPTRBayesClassifier(
        epsilon=2.0, delta=1e-6, classes=["no", "yes"], x_radius=3.0, bounds=(0.0, 4.0),
        clip=True, random_state=make_rng(4), inference=inference,
    )  # fmt: skip


def test_bayes_inference_flag_prints_the_class_intervals(tmp_path, capsys):
    """Without --inference: the class's default 'none', the table as before (no interval
    column). With --inference sandwich: the share as ePTR released it and the share's and
    each mean's std_err and 95% interval, the numbers of the class's results_ at the same
    seed; the terminal shows them one parameter a line. Means are in the features' units."""
    path, X, lab = _bayes_data(tmp_path)
    assert main(["model", "eptr-bayes", path, *_BAYES, "--format", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert [list(r) for r in plain] == [["class", "prior", "mean_a", "mean_b_2", "released"]] * 2
    assert main(["model", "eptr-bayes", path, *_BAYES, "--inference", "sandwich", "-o",
                 str(tmp_path / "o.json")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "standard errors and 95% intervals" in out and "shares: as ePTR released" in out
    rows = json.loads((tmp_path / "o.json").read_text())
    fields = ["std_err", "ci_lower", "ci_upper"]
    extra = ["share", *[f"{p}_{f}" for p in ("share", "mean_a", "mean_b_2") for f in fields]]
    assert [list(r) for r in rows] == [[*plain[0], *extra]] * 2
    fit = _bayes_class("sandwich").fit(pd.DataFrame(X, columns=["a", "b_2"]), lab)
    res, ci = fit.results_, fit.results_.conf_int(0.05)
    assert fit.released_ and all(r["released"] for r in rows)
    for k, row in enumerate(rows):
        c = row["class"]
        assert row["share"] == res.params[(c, "share")] and row["prior"] == fit.class_prior_[k]
        assert row["share_std_err"] == res.bse[(c, "share")]
        assert [row["share_ci_lower"], row["share_ci_upper"]] == list(ci.loc[(c, "share")])
        for f in ("a", "b_2"):
            assert row[f"mean_{f}"] == res.params[(c, f)]  # features' units, as results_
            assert row[f"mean_{f}_std_err"] == res.bse[(c, f)]
            assert [row[f"mean_{f}_ci_lower"], row[f"mean_{f}_ci_upper"]] == list(ci.loc[(c, f)])
            assert f"{row[f'mean_{f}_ci_lower']:.6g}" in out


def test_bayes_means_are_in_the_features_units(tmp_path, capsys):
    """The means printed and written are the class means in the features' units (the box
    centre 2 added back), not the centred ones; the released noise sd is ~0.03."""
    path, X, lab = _bayes_data(tmp_path)
    assert main(["model", "eptr-bayes", path, *_BAYES, "--format", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    truth = pd.DataFrame(X, columns=["a", "b_2"]).groupby(lab).mean()
    for row in plain:
        assert row["mean_a"] == pytest.approx(truth.loc[row["class"], "a"], abs=0.2)
        assert row["mean_b_2"] == pytest.approx(truth.loc[row["class"], "b_2"], abs=0.2)


def test_inference_defaults_are_the_classes(csv):
    """No --inference: each class's default (ols 'sandwich', bayes 'none'); a value given
    reaches the model; the choices are the classes' values."""
    from privest.cli import build_parser
    from privest.commands.model import INFERENCES, _build
    from privest.models.eptr_bayes import EPTRBayesClassifier
    from privest.models.eptr_inference import INFERENCES as CLASS_INFERENCES
    from privest.models.eptr_ols import EPTRLinearRegression

    assert INFERENCES == CLASS_INFERENCES
    common = ["--epsilon", "1", "--delta", "1e-6", "--x-radius", "4"]
    ols = _model_args(csv, "eptr-ols", *common, "--theta-radius", "1")
    bayes = _model_args(csv, "eptr-bayes", *common)
    for args, default in ((ols, EPTRLinearRegression()), (bayes, EPTRBayesClassifier())):
        assert _build(build_parser().parse_args(args), None, 2).inference == default.inference
        for value in INFERENCES:
            built = _build(build_parser().parse_args([*args, "--inference", value]), None, 2)
            assert built.inference == value


def test_ols_inference_none_prints_no_interval(csv, capsys):
    args = _model_args(csv, "eptr-ols", "--epsilon", "2", "--delta", "0.01", "--x-radius", "4")
    args += ["--theta-radius", "10", "--y-radius", "5", "--c0", "0.3", "--seed", "5"]
    assert main([*args, "--format", "json"]) == 0
    assert all(r["std_err"] is not None for r in json.loads(capsys.readouterr().out))
    assert main([*args, "--inference", "none", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [list(r) for r in rows] == [["feature", "coefficient", "released"]] * 2


def test_bayes_budget_spent_is_the_class_guarantee(tmp_path, capsys):
    """--inference sandwich spends inside the guarantee: the ledger is charged the class's
    guarantee (epsilon, delta), once."""
    from privest.accounting.budget import Budget

    path, _, _ = _bayes_data(tmp_path)
    ledger = tmp_path / "ledger.json"
    assert main(["budget", str(ledger), "--epsilon", "10", "--delta", "1e-3"]) == 0
    args = ["model", "eptr-bayes", path, *_BAYES, "--budget", str(ledger)]
    assert main([*args, "--inference", "sandwich"]) == 0
    (spend,) = Budget.open(ledger).spends
    g = _bayes_class("sandwich").guarantee
    assert (spend.epsilon, spend.delta) == (g.eps, g.dlt) == (2.0, 1e-6)
    assert "charged model eptr-bayes" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("method", "extra", "msg"),
    [
        ("eptr-bayes", ["--inference", "bootstrap"], "--inference: invalid choice"),
        ("eptr-ols", ["--inference", "Sandwich"], "--inference: invalid choice"),
        ("eptr-nw", ["--inference", "sandwich"], "--inference: for eptr-ols and eptr-bayes"),
        ("linear", ["--inference", "none"], "--inference: for eptr-ols and eptr-bayes"),
    ],
)
def test_bad_inference_refused_before_the_data_are_read(
    csv, capsys, monkeypatch, method, extra, msg
):
    import privest.commands.model as model

    def no_records(*_a, **_k):
        raise AssertionError("the records were read")

    monkeypatch.setattr(model, "read_csv", no_records)
    if "invalid choice" in msg:  # refused by the parser: not even the header is read
        monkeypatch.setattr(model, "read_header", no_records)
    common = ["--epsilon", "1", "--delta", "1e-6", "--x-radius", "4", "--bounds=-3:3"]
    argv = [*_model_args(csv, method, *common), *extra]
    if "invalid choice" in msg:
        with pytest.raises(SystemExit) as exc:  # argparse refuses it
            main(argv)
        assert exc.value.code == 2
    else:
        assert main(argv) == 2
    assert msg in capsys.readouterr().err


def test_ols_near_the_sphere_says_why_no_interval(csv, capsys):
    """An estimate within the SPHERE_LEVEL margin of theta_radius 1: no interval, and the
    output says why (results_'s note); far inside (theta_radius 10): intervals, no note."""
    args = _model_args(csv, "eptr-ols", "--epsilon", "2", "--delta", "0.01", "--x-radius", "4")
    args += ["--c0", "0.3", "--seed", "5"]
    assert main([*args, "--theta-radius", "1"]) == 0
    out = capsys.readouterr().out
    assert "near the theta_radius sphere" in out and " - │" in out
    assert main([*args, "--theta-radius", "10", "--y-radius", "5"]) == 0
    assert "near the theta_radius sphere" not in capsys.readouterr().out


def test_bayes_intervals_when_nothing_is_released(csv, tmp_path, capsys):
    """Nothing released (c0 near the smallest share): the interval columns are there and
    empty, and no interval table is shown (the bottom has no parameters)."""
    args = _model_args(csv, "eptr-bayes", "--epsilon", "1", "--delta", "1e-6", "--x-radius", "4")
    args += ["--c0", "0.49", "--seed", "2", "--inference", "sandwich"]
    assert main([*args, "-o", str(tmp_path / "nr.csv")]) == 0
    out = capsys.readouterr().out
    assert "NOT released" in out and "95% intervals" not in out
    table = pd.read_csv(tmp_path / "nr.csv")
    assert not table.released.any() and len(table.columns) == 5 + 1 + 3 * 3
    assert table.loc[:, "share":].isna().all().all()
