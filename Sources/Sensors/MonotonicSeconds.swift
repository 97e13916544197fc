import Glibc

/// Seconds on CLOCK_MONOTONIC, the time base of samples that carry no device timestamp.
public func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}
