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
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .target(
            name: "Sensors",
            dependencies: ["CALSA", .product(name: "Logging", package: "swift-log")]
        ),
        .target(name: "Minigames", dependencies: ["Sensors"]),
        .executableTarget(
            name: "nearplay",
            dependencies: [
                "BeaconFrames",
                "Sensors",
                "Minigames",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "SensorsBenchmark",
            dependencies: ["Sensors", "Minigames"],
            path: "Benchmarks/SensorsBenchmark"
        ),
        .testTarget(name: "SensorsTests", dependencies: ["Sensors"]),
        .testTarget(name: "MinigamesTests", dependencies: ["Minigames", "Sensors"]),
        .testTarget(name: "SensorsCLITests", dependencies: ["nearplay", "Minigames", "Sensors"]),
    ]
)
