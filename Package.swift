// swift-tools-version:6.0
import PackageDescription

/// The per-advertisement path crosses BeaconFrames and Ranging: let release builds inline across them.
let hotPath: [SwiftSetting] = [.unsafeFlags(["-cross-module-optimization"], .when(configuration: .release))]

/// Release builds of the programs a device runs are linked for the device: the Swift runtime and
/// Foundation linked in statically (one file to copy to a Raspberry Pi, no toolchain needed there),
/// by lld with packed relative relocations (DT_RELR, glibc 2.36 or later: Debian 12, Raspberry Pi
/// OS 12). Both shrink what every process keeps resident: the dynamic loader no longer touches
/// megabytes of relocation records and the shared libraries' pages at start, so the agent with 200
/// beacons around it holds about 37 MB instead of 41 (Benchmarks/agent.md). Link flags only: the
/// compiled modules are the same as a debug or test build's. The `-l…` flags name what static
/// Foundation itself needs (CoreFoundation, its ICU, collections and C shims): a link reads the
/// autolink entries of the objects it is given, not of those inside Foundation's archives.
let deviceBinary: [LinkerSetting] = [
    .unsafeFlags(
        ["-static-stdlib", "-lCoreFoundation", "-l_FoundationICU", "-l_FoundationCollections", "-l_FoundationCShims", "-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"],
        .when(configuration: .release)
    ),
]

let package = Package(
    name: "Nearplay",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "nearplay", targets: ["nearplay"]),
        .executable(name: "nearplay-lobby", targets: ["NearplayLobby"]),
        .library(name: "Spawn", targets: ["Spawn"]),
        .executable(name: "nearplay-bench", targets: ["NearplayBenchmarks"]),
        .executable(name: "nearplay-agent-bench", targets: ["nearplay-agent-bench"]),
        .executable(name: "nearplay-stats-bench", targets: ["nearplay-stats-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.2.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.21.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.1"),
    ],
    targets: [
        // Below everything (Foundation only): what several libraries would otherwise write again.
        .target(name: "SystemSupport"),
        // Libraries, in the order data flows: radio → frames → ranging → agent → lobby.
        .target(name: "BeaconFrames", dependencies: ["SystemSupport"], swiftSettings: hotPath),
        .target(name: "Ranging", dependencies: ["BeaconFrames"], swiftSettings: hotPath),
        .target(name: "Traces", dependencies: ["SystemSupport", "BeaconFrames", "Ranging"]),
        // The rotating identities' derivation, shared by the agent, the location beacon and the lobby.
        .target(name: "BeaconKeys", dependencies: [.product(name: "Crypto", package: "swift-crypto")]),
        // sensors → games → rounds: the samples and the scoring are pure (the lobby verifies
        // rounds with them); only `Sensors` links ALSA.
        .target(name: "SensorSamples"),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .target(
            name: "Sensors",
            dependencies: ["SystemSupport", "SensorSamples", "CALSA", .product(name: "Logging", package: "swift-log")]
        ),
        .target(name: "Minigames", dependencies: ["SensorSamples"]),
        .target(
            name: "Rounds",
            dependencies: ["Sensors", "Minigames", .product(name: "Logging", package: "swift-log")]
        ),
        .systemLibrary(name: "CDBus", pkgConfig: "dbus-1", providers: [.apt(["libdbus-1-dev"])]),
        .target(name: "DBus", dependencies: ["SystemSupport", "CDBus"]),
        // libbluetooth, for the raw HCI radio backend.
        .systemLibrary(name: "CBluetooth", pkgConfig: "bluez", providers: [.apt(["libbluetooth-dev"])]),
        .target(
            name: "Radio",
            dependencies: [
                // Ranging for the simulated air's path-loss formula.
                "SystemSupport", "BeaconFrames", "BeaconKeys", "Ranging", "DBus", "CBluetooth",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "HeapModule", package: "swift-collections"),
                // The simulated air's sockets and the HCI link are NIOAsyncChannels.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(name: "Proximity", dependencies: ["BeaconFrames", "Ranging", "Radio"]),
        .target(
            name: "Agent",
            dependencies: [
                "SystemSupport", "BeaconFrames", "BeaconKeys", "Ranging", "Traces", "Radio", "Proximity", "DBus", "LobbyClient", "Minigames", "Rounds", "SensorSamples",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // The local API's sockets are NIOAsyncChannels.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The lobby's two storage engines behind one synchronous transaction interface: SQLite
        // (through GRDB, the default) and PostgreSQL (through postgres-nio, for several instances).
        .target(
            name: "LobbyDatabase",
            dependencies: [
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(
            name: "Lobby",
            dependencies: [
                "SystemSupport", "Minigames", "SensorSamples", "BeaconKeys", "LobbyDatabase",
                // BeaconFrames for SplitMix64 and MeasuredPower; Ranging for the crowd calibration's solve.
                "BeaconFrames", "Ranging",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Logging", package: "swift-log"),
                // NIOThreadPool, where bcrypt runs.
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .target(
            name: "LobbyServer",
            dependencies: [
                "SystemSupport", "Lobby", "LobbyDatabase",
                "Minigames", "SensorSamples",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdAuth", package: "hummingbird-auth"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            // The web view's pages, style and scripts are compiled into the binary: nothing to
            // install beside it, and what is served is what was tested.
            resources: [
                .embedInCode("openapi.yaml"),
                .embedInCode("Web/Assets/layout.mustache"), .embedInCode("Web/Assets/location.mustache"),
                .embedInCode("Web/Assets/location-board.mustache"), .embedInCode("Web/Assets/player.mustache"),
                .embedInCode("Web/Assets/sign-in.mustache"), .embedInCode("Web/Assets/message.mustache"),
                .embedInCode("Web/Assets/nearplay.css"), .embedInCode("Web/Assets/screen.js"),
            ]
        ),
        // The lobby API's types and client, generated from Sources/LobbyServer/openapi.yaml by
        // scripts/generate-lobby-api (committed: a build never runs the generator).
        .target(
            name: "LobbyAPI",
            dependencies: ["Minigames", "SensorSamples", .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime")],
            exclude: ["openapi-generator-config.yaml"]
        ),
        .target(
            name: "LobbyClient",
            dependencies: [
                // BeaconFrames for the one mapping between beacon identities and the API's beacons.
                "LobbyAPI", "BeaconFrames", "Minigames", "SensorSamples", "BeaconKeys",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIAsyncHTTPClient", package: "swift-openapi-async-http-client"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Child processes without Foundation's `Process`: for the demo, the tests and the benchmarks.
        .target(name: "Spawn"),
        // The programs.
        .executableTarget(
            name: "nearplay",
            dependencies: [
                "SystemSupport", "BeaconFrames", "Ranging", "Traces", "Sensors", "Minigames", "Rounds", "Radio", "Proximity", "Agent", "LobbyClient", "Spawn",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            linkerSettings: deviceBinary
        ),
        // The lobby server, apart from the agent: `nearplay lobby …` runs it.
        .executableTarget(
            name: "NearplayLobby",
            dependencies: [
                "Lobby", "LobbyDatabase", "LobbyServer", "Minigames", "BeaconKeys",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Sources/nearplay-lobby",
            linkerSettings: deviceBinary
        ),
        // What the tests share.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .target(name: "BusTestSupport", dependencies: ["TestSupport", "DBus", "Radio", "BeaconFrames", "Spawn"], path: "Tests/BusTestSupport"),
        // A private PostgreSQL cluster for tests and benchmarks, run as an unprivileged user.
        .target(name: "DatabaseTestSupport", dependencies: ["BusTestSupport", "LobbyDatabase"], path: "Tests/DatabaseTestSupport"),
        // The two-way ranging experiment nearplay-air-bench runs, apart so SimulatedAirTests can import it.
        .target(name: "AirBenchmarkSupport", dependencies: ["Radio", "Ranging", "BeaconFrames"], path: "Benchmarks/AirBenchmarkSupport"),
        // Tests.
        .testTarget(name: "SystemSupportTests", dependencies: ["SystemSupport"]),
        .testTarget(name: "BeaconFramesTests", dependencies: ["BeaconFrames", "BeaconKeys"]),
        .testTarget(name: "RangingTests", dependencies: ["Ranging", "BeaconFrames"]),
        .testTarget(name: "TracesTests", dependencies: ["Traces", "Ranging", "BeaconFrames"]),
        .testTarget(name: "SensorsTests", dependencies: ["Sensors", "SensorSamples", "BeaconFrames", "SystemSupport", "TestSupport"]),
        .testTarget(name: "MinigamesTests", dependencies: ["Minigames", "SensorSamples", "Sensors"]),
        .testTarget(name: "RoundsTests", dependencies: ["Rounds", "Minigames", "Sensors", "TestSupport"]),
        .testTarget(name: "DBusTests", dependencies: ["DBus", "BusTestSupport"]),
        .testTarget(
            name: "RadioTests",
            dependencies: [
                "Radio", "DBus", "BeaconFrames", "Ranging", "Proximity", "BusTestSupport", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "SimulatedAirTests", dependencies: ["Radio", "BeaconFrames", "BeaconKeys", "Ranging", "Proximity", "BusTestSupport", "AirBenchmarkSupport"]),
        .testTarget(
            name: "AgentTests",
            dependencies: ["Agent", "BeaconKeys", "Proximity", "Radio", "Ranging", "BeaconFrames", "LobbyClient", "BusTestSupport", "DatabaseTestSupport", "Minigames", "Rounds", "SensorSamples"]
        ),
        .testTarget(name: "LobbyDatabaseTests", dependencies: ["LobbyDatabase", "DatabaseTestSupport", "BusTestSupport"]),
        .testTarget(
            name: "LobbyTests",
            dependencies: ["Lobby", "BeaconKeys", "Minigames", "SensorSamples", "LobbyDatabase", "DatabaseTestSupport", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .testTarget(
            name: "LobbyServerTests",
            dependencies: [
                "BusTestSupport", "DatabaseTestSupport",
                "BeaconKeys",
                "Lobby",
                "LobbyServer",
                "LobbyClient",
                "LobbyAPI",
                .product(name: "Crypto", package: "swift-crypto"),
                "Minigames", "SensorSamples",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "NearplayCLITests", dependencies: ["Traces", "BeaconFrames", "DBus", "BusTestSupport"]),
        .testTarget(name: "SensorsCLITests", dependencies: ["nearplay", "Minigames", "Sensors", "Rounds"]),
        // Benchmarks and soaks.
        .executableTarget(
            name: "nearplay-dbus-bench",
            dependencies: ["DBus", "Radio", "BusTestSupport", "Spawn"],
            path: "Benchmarks/DBusThroughput"
        ),
        .executableTarget(
            name: "nearplay-bluez-soak",
            dependencies: ["Radio", "DBus", "BeaconFrames", "BusTestSupport"],
            path: "Benchmarks/BlueZSoak"
        ),
        // Advertises a rotating identity through a live backend, for the real-stack check
        // `rotating-identities` (scripts/real-stack/guest-checks); not a product.
        .executableTarget(
            name: "nearplay-rotating-advertiser",
            dependencies: ["Radio", "BeaconKeys", "BeaconFrames", .product(name: "Logging", package: "swift-log")],
            path: "Tests/RealStackTools/RotatingAdvertiser",
            linkerSettings: deviceBinary
        ),
        .executableTarget(
            name: "nearplay-hci-bench",
            dependencies: ["Radio", "Proximity", "Ranging", "BeaconFrames", "BusTestSupport"],
            path: "Benchmarks/HCIBenchmark"
        ),
        .executableTarget(
            name: "nearplay-air-bench",
            dependencies: ["Radio", "Ranging", "BeaconFrames", "AirBenchmarkSupport", "Spawn"],
            path: "Benchmarks/AirBenchmark"
        ),
        .executableTarget(
            name: "nearplay-db-bench",
            dependencies: ["LobbyDatabase", "DatabaseTestSupport"],
            path: "Benchmarks/DatabaseBenchmark"
        ),
        .executableTarget(
            name: "nearplay-rotation-bench",
            dependencies: ["Lobby", "BeaconKeys", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Benchmarks/RotationBenchmark"
        ),
        .executableTarget(
            name: "nearplay-agent-bench",
            dependencies: [
                "Agent", "BeaconKeys", "Proximity", "Radio", "Ranging", "BeaconFrames", "LobbyClient", "Spawn",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/AgentBenchmark"
        ),
        .executableTarget(
            name: "nearplay-lobby-soak",
            dependencies: [
                "Lobby", "LobbyClient", "Minigames", "BeaconFrames", "Spawn",
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Benchmarks/LobbySoak"
        ),
        .executableTarget(
            name: "nearplay-event-flood",
            dependencies: [
                "Lobby", "LobbyServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/EventFlood"
        ),
        .executableTarget(
            name: "nearplay-localapi-bench",
            dependencies: ["Agent"],
            path: "Benchmarks/LocalAPIBenchmark"
        ),
        .executableTarget(
            name: "nearplay-stats-bench",
            dependencies: ["Lobby", "Minigames", .product(name: "GRDB", package: "GRDB.swift")],
            path: "Benchmarks/StatsBenchmark"
        ),
        .executableTarget(
            name: "NearplayBenchmarks",
            dependencies: ["BeaconFrames", "Ranging"],
            path: "Benchmarks/PathBenchmark"
        ),
        .executableTarget(
            name: "SensorsBenchmark",
            dependencies: ["Sensors", "Minigames", "BeaconFrames"],
            path: "Benchmarks/SensorsBenchmark"
        ),
    ]
)
