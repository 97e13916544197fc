import Foundation
import TestSupport
import struct BeaconFrames.SplitMix64
import Testing
@testable import Sensors

/// Whatever a driver (or a broken fake) writes, parsing reports an error naming the file and
/// never traps.
struct AttributeFuzzTests {
    @Test func numbersFromAnyTextNeverTrap() {
        var generator = SplitMix64(seed: 11)
        let alphabet = Array("0123456789.-+eE [] \t\nxnaNinf∞é\u{0}")
        var accepted = 0
        for _ in 0..<50_000 {
            let text = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
            do {
                let value = try Sysfs.parseNumber(text, path: "/sys/x/in_accel_scale")
                #expect(value.isFinite)
                accepted += 1
            } catch {
                guard case .malformedAttribute(let path, let echoed, _) = error else {
                    Issue.record("unexpected \(error)")
                    return
                }
                #expect(path == "/sys/x/in_accel_scale")
                #expect(echoed == text)
            }
        }
        #expect(accepted > 0)
    }

    @Test func refusesTextThatIsNotADecimalNumber() throws {
        for text in ["", "nan", "inf", "0x10", "1,5", "1.5 m/s", "--1", "1e999"] {
            #expect(throws: SensorError.self, "\(text.debugDescription)") { try Sysfs.parseNumber(text, path: "/p") }
        }
        #expect(try Sysfs.parseNumber(" 0.009576 ", path: "/p") == 0.009576)
        #expect(try Sysfs.parseNumber("-12", path: "/p") == -12)
    }

    @Test func readsAvailableListsAndRanges() throws {
        let directory = try TemporaryFolder("attr")
        try directory.write("12.5 25 50\n", to: "list")
        try directory.write("[0.5 0.1 10]\n", to: "range")
        try directory.write("12.5 fast\n", to: "bad")
        #expect(try Sysfs.numberList(directory.path + "/list") == [12.5, 25, 50])
        #expect(try Sysfs.numberList(directory.path + "/range") == [0.5, 10])
        #expect(throws: SensorError.malformedAttribute(path: directory.path + "/bad", text: "fast", reason: "expected a decimal number")) {
            try Sysfs.numberList(directory.path + "/bad")
        }
    }

    /// Random bytes through the acceleration decoder, on random legal layouts.
    @Test func decoderNeverTrapsOnAnyBytes() throws {
        var generator = SplitMix64(seed: 5)
        let types = ["le:s12/16>>4", "be:u16/16>>0", "le:s64/64>>0", "be:s24/32>>8", "le:u8/8>>0", "be:s16/16X3>>0"]
        for _ in 0..<3_000 {
            var channels = try ["in_accel_x", "in_accel_y", "in_accel_z"].map { name in
                ScanChannel(name: name, index: Int.random(in: 0...20, using: &generator), type: try ScanElementType(parsing: types.randomElement(using: &generator)!))
            }
            if Bool.random(using: &generator) {
                channels.append(ScanChannel(name: "in_timestamp", index: 30, type: try ScanElementType(parsing: "le:s64/64>>0")))
            }
            guard Set(channels.map(\.index)).count == channels.count else { continue }
            let layout = try ScanLayout(channels: channels)
            let decoder = try AccelerationScanDecoder(layout: layout, scale: [0.1, 0.1, 0.1], offset: [0, 1, -1])
            let bytes = (0..<Int.random(in: 0...300, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var samples: [AccelerationSample] = []
            let used = bytes.withUnsafeBytes { decoder.decode($0, into: &samples) }
            #expect(used == bytes.count / layout.scanBytes * layout.scanBytes)
            #expect(samples.count == bytes.count / layout.scanBytes)
        }
    }
}
