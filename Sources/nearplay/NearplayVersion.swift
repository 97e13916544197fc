/// Nearplay's version, as `nearplay --version` prints it: the one place it is written.
enum NearplayVersion {
    static let current = "0.2.0"
}
