// swift-tools-version:6.0
import PackageDescription

/// The per-advertisement path crosses BeaconFrames and Ranging: let release builds inline across them.
let hotPath: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]

let package = Package(
    name: "Nearplay",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "nearplay", targets: ["nearplay"]),
        .executable(name: "nearplay-bench", targets: ["NearplayBenchmarks"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // radio → frames → ranging → agent → lobby
        .target(name: "BeaconFrames", swiftSettings: hotPath),
        .target(name: "Ranging", dependencies: ["BeaconFrames"], swiftSettings: hotPath),
        .target(name: "Traces", dependencies: ["BeaconFrames", "Ranging"]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .target(
            name: "Sensors",
            dependencies: ["CALSA", .product(name: "Logging", package: "swift-log")]
        ),
        .target(name: "Minigames", dependencies: ["Sensors"]),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .target(name: "DBus", dependencies: ["CDBus"]),
        .target(
            name: "Radio",
            dependencies: ["BeaconFrames", "DBus", .product(name: "Logging", package: "swift-log")]
        ),
        .target(name: "BusTestSupport", dependencies: ["DBus"], path: "Tests/BusTestSupport"),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "BusTestSupport"]),
        .executableTarget(
            name: "nearplay-dbus-bench",
            dependencies: ["DBus", "Radio", "BusTestSupport"],
            path: "Benchmarks/DBusThroughput"
        ),
        .testTarget(name: "RadioTests", dependencies: ["Radio", "DBus", "BeaconFrames", "Ranging", "BusTestSupport"]),
        .executableTarget(
            name: "nearplay",
            dependencies: [
                "BeaconFrames", "Ranging", "Traces", "Sensors", "Minigames", "Radio", "DBus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "NearplayBenchmarks",
            dependencies: ["BeaconFrames", "Ranging"],
            path: "Benchmarks/PathBenchmark"
        ),
        .executableTarget(
            name: "SensorsBenchmark",
            dependencies: ["Sensors", "Minigames"],
            path: "Benchmarks/SensorsBenchmark"
        ),
        .testTarget(name: "BeaconFramesTests", dependencies: ["BeaconFrames"]),
        .testTarget(name: "RangingTests", dependencies: ["Ranging", "BeaconFrames"]),
        .testTarget(name: "TracesTests", dependencies: ["Traces", "Ranging", "BeaconFrames"]),
        .testTarget(name: "NearplayCLITests", dependencies: ["Traces", "BeaconFrames"]),
        .testTarget(name: "SensorsTests", dependencies: ["Sensors"]),
        .testTarget(name: "MinigamesTests", dependencies: ["Minigames", "Sensors"]),
        .testTarget(name: "SensorsCLITests", dependencies: ["nearplay", "Minigames", "Sensors"]),
    ]
)
