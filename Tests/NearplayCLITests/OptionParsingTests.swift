import Foundation
import Testing

/// Options of the built `nearplay` as people type them: negative numbers after a space, and
/// `--version`.
@Suite struct OptionParsingTests {
    static let uuid = "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0"

    /// A value out of range gets the range message, which only comes once the negative number
    /// was read as the option's value (before the fix: "Missing value for '--power <power>'").
    @Test(arguments: [
        (["advertise", "--uuid", uuid, "--major", "1", "--minor", "2", "--power", "-200"],
         "--power is the RSSI at 1 m in dBm, between -127 and -1"),
        (["scan", "--rssi-threshold", "-200"], "--rssi-threshold must be between -127 and 20 dBm."),
        (["record", "out.jsonl", "--rssi-threshold", "-200"], "--rssi-threshold must be between -127 and 20 dBm."),
        (["replay", "--rssi-offset", "-61", "x.jsonl"], "--rssi-offset -61: give a number of dB (between -60 and 60)"),
        (["sensors", "--orientation", "-q,x,z"], "--orientation -q,x,z is not three distinct axes"),
    ])
    func readsANegativeValueAfterASpace(arguments: [String], message: String) async throws {
        let run = try await CLITests.run(arguments)
        #expect(run.status == 64, "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
        #expect(!run.stderr.contains("Missing value"), "\(arguments)")
    }

    @Test func appliesANegativeRSSIOffsetGivenAfterASpace() async throws {
        let path = try CLITests.temporaryFile("{\"nearplay_trace\":1}\n{\"t\":0,\"addr\":\"C0:FF:EE:00:00:01\",\"rssi\":-70,\"ad\":\"\(CLITests.ad)\"}\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let run = try await CLITests.run(["replay", "--json", "--rssi-offset", "-3", path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(#""event":"enter","beacon":"E2C56DB5-DFFB-48D2-B060-D0F5A71096E0/1/2","addr":"C0:FF:EE:00:00:01","rssi":-73}"#))
        let perReceiver = try await CLITests.run(["replay", "--json", "--rssi-offset", "-3", "--rssi-offset", "pi=-5", path])
        #expect(perReceiver.status == 0, "\(perReceiver.stderr)")
        #expect(perReceiver.stdout.contains(#""rssi":-73"#))
    }

    @Test func printsItsVersion() async throws {
        let run = try await CLITests.run(["--version"])
        #expect(run.status == 0)
        let version = run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(version.wholeMatch(of: /[0-9]+\.[0-9]+\.[0-9]+/) != nil, "“\(version)” is not MAJOR.MINOR.PATCH")
        #expect(version == "0.2.0")
        #expect(run.stderr.isEmpty)
    }
}

/// `--backend hci` as people type it, on this machine. One command at a time, each waited for on
/// a thread of its own: the test pool's two threads stay free for the tests that need them.
@Suite(.serialized) struct HCIBackendOptionTests {
    static func run(_ arguments: [String]) async throws -> CLITests.Run {
        try await CLITests.run(arguments)
    }

    /// Options of another backend, or out of range, are refused before anything is opened.
    @Test(arguments: [
        (["scan", "--backend", "hci", "--device", "alice"], "--device and --air-socket are for the simulated air"),
        (["scan", "--hci-scan-interval", "50"], "--hci-active, --hci-scan-interval and --hci-scan-window is for the hci backend"),
        (["record", "out.jsonl", "--hci-active"], "is for the hci backend"),
        (["scan", "--backend", "hci", "--hci-scan-interval", "50", "--hci-scan-window", "60"], "--hci-scan-window must be between 2.5 ms and the scan interval"),
        (["scan", "--backend", "hci", "--adapter", "bt0"], "--adapter takes an adapter name such as hci0"),
        (["scan", "--backend", "radio"], "--backend"),
        (["beacon", "--location", "hall", "--backend", "hci", "--device", "alice"], "--device and --air-socket are for the simulated air"),
    ])
    func refusesOptionsThatCannotWork(arguments: [String], message: String) async throws {
        let run = try await Self.run(arguments)
        #expect(run.status == 64, "\(arguments): \(run.stderr)")
        #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
    }

    static var kernelHasNoBluetooth: Bool {
        let fd = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1)
        if fd >= 0 { close(fd) }
        return fd < 0 && errno == EAFNOSUPPORT
    }

    /// Without Bluetooth in the kernel (these test machines), the hci backend says so and exits
    /// with EX_UNAVAILABLE instead of waiting for an adapter that cannot appear.
    @Test(.enabled(if: kernelHasNoBluetooth), arguments: [["scan", "--backend", "hci"], ["record", "-", "--backend", "hci", "--adapter", "hci1"]])
    func saysWhenTheKernelHasNoBluetooth(arguments: [String]) async throws {
        let run = try await Self.run(arguments)
        #expect(run.status == 69, "\(run.stderr)")
        #expect(run.stderr.contains("This kernel has no Bluetooth support"), "\(run.stderr)")
    }
}
