def test_a_cache_write_skips_fsync_but_stays_atomic(tmp_path, monkeypatch):
    from docevals_mlflow.core.atomic import atomic_write_text

    def no_fsync(fd):
        raise AssertionError("fsync called")

    monkeypatch.setattr("os.fsync", no_fsync)
    target = atomic_write_text(tmp_path / "entry.json", "{}", durable=False)
    assert target.read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir()] == ["entry.json"]  # no temporary left
