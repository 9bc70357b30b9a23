//! `scl_db::timings`, alone in its test binary: recording is process-wide,
//! so a check running on another test thread would add its marks.

#[test]
fn marks_are_kept_in_order_only_when_enabled() {
    scl_db::timings::mark("before");
    assert!(scl_db::timings::take().is_empty(), "recorded while off");
    scl_db::timings::enable();
    scl_db::timings::mark("a");
    scl_db::timings::mark("b");
    let m = scl_db::timings::take();
    let names: Vec<&str> = m.iter().map(|x| x.0).collect();
    assert_eq!(names, ["start", "a", "b"]);
    assert!(m.windows(2).all(|w| w[0].1 <= w[1].1 && w[1].2 >= 0.0));
    assert!(scl_db::timings::take().is_empty(), "take forgets");
}
