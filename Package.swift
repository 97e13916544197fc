// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Nearplay",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "nearplay", targets: ["nearplay"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // radio → frames → ranging → agent → lobby
        .target(name: "BeaconFrames"),
        .target(name: "Ranging", dependencies: ["BeaconFrames"]),
        .target(name: "Traces", dependencies: ["BeaconFrames", "Ranging"]),
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
                "BeaconFrames", "Ranging", "Traces", "Radio", "DBus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "BeaconFramesTests", dependencies: ["BeaconFrames"]),
        .testTarget(name: "RangingTests", dependencies: ["Ranging", "BeaconFrames"]),
        .testTarget(name: "TracesTests", dependencies: ["Traces", "Ranging", "BeaconFrames"]),
        .testTarget(name: "NearplayCLITests", dependencies: ["Traces", "BeaconFrames"]),
    ]
)
