@testable import DBus
import Testing

@Suite struct StringInternerTests {
    private func intern(_ text: [UInt8], _ interner: inout StringInterner) -> String {
        (text + [0]).withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { interner.string($0.baseAddress!) }
        }
    }

    private func storage(_ text: String) -> UnsafeRawPointer? {
        var text = text
        return text.withUTF8 { UnsafeRawPointer($0.baseAddress) }
    }

    @Test func sharesOneStringForRepeatedLongText() {
        var interner = StringInterner()
        let path = Array("/org/bluez/hci0/dev_C0_FF_EE_00_00_01".utf8)
        let first = intern(path, &interner)
        let second = intern(path, &interner)
        #expect(first == "/org/bluez/hci0/dev_C0_FF_EE_00_00_01")
        #expect(storage(first) == storage(second))
        #expect(interner.hits == 1)
        let other = intern(Array("/org/bluez/hci0/dev_C0_FF_EE_00_00_02".utf8), &interner)
        #expect(other == "/org/bluez/hci0/dev_C0_FF_EE_00_00_02")
        #expect(interner.hits == 1)
    }

    @Test func keepsShortTextOutOfTheTable() {
        var interner = StringInterner()
        #expect(intern(Array("RSSI".utf8), &interner) == "RSSI")
        #expect(intern(Array("RSSI".utf8), &interner) == "RSSI")
        #expect(interner.hits == 0)
    }

    @Test func startsOverWhenFull() {
        var interner = StringInterner(capacity: 2)
        for index in 0..<5 {
            #expect(intern(Array("org.nearplay.Interface\(index)".utf8), &interner) == "org.nearplay.Interface\(index)")
        }
        #expect(intern(Array("org.nearplay.Interface4".utf8), &interner) == "org.nearplay.Interface4")
        #expect(interner.hits == 1)
    }

    @Test func repairsInvalidUTF8() {
        var interner = StringInterner()
        let text = intern(Array("org.nearplay.".utf8) + [0xFF, 0xFE] + Array("Interface".utf8), &interner)
        #expect(text == "org.nearplay.\u{FFFD}\u{FFFD}Interface")
    }
}
