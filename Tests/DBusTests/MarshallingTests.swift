import BusTestSupport
import DBus
import Testing

/// Values sent through a real bus and echoed back by an exported object come back unchanged.
@Suite struct MarshallingTests {
    static let echoPath: DBusObjectPath = "/org/nearplay/test/echo"

    static func echoObject() -> DBusExportedObject {
        DBusExportedObject(path: echoPath, interfaces: [
            DBusExportedInterface(name: "org.nearplay.Test", methods: [
                DBusExportedMethod(name: "Echo", inputSignature: "v", outputSignature: "v") { call in call.body },
            ]),
        ])
    }

    static let values: [DBusValue] = [
        .byte(0xFE), .boolean(true), .boolean(false), .int16(-32768), .uint16(65535), .int32(-5), .uint32(4_000_000_000),
        .int64(Int64.min), .uint64(UInt64.max), .double(-63.25), .string("Grüße, beacon ☺"), .string(""),
        .objectPath("/org/bluez/hci0/dev_C0_FF_EE_00_00_01"), .signature("a{oa{sa{sv}}}"),
        .bytes([0x02, 0x15, 0xE2, 0xC5]), .bytes([]),
        .strings(["le", "bredr"]), .array(element: "i", []),
        .stringVariantDictionary([("RSSI", .int16(-63)), ("Powered", .boolean(true)), ("Nested", .variant(.variant(.uint32(7))))]),
        .dictionary(key: "q", value: "v", [DBusDictionaryEntry(.uint16(0x004C), .variant(.bytes([0x02, 0x15, 0x01])))]),
        .dictionary(key: "o", value: "a{sa{sv}}", [
            DBusDictionaryEntry(.objectPath("/org/bluez/hci0"), .dictionary(key: "s", value: "a{sv}", [
                DBusDictionaryEntry(.string("org.bluez.Adapter1"), .stringVariantDictionary([("Address", .string("00:01:02:03:04:05"))])),
            ])),
        ]),
        .structure([.byte(0), .byte(0xFF), .bytes([0x4C, 0x00])]),
        .array(element: "(ys)", [.structure([.byte(1), .string("one")]), .structure([.byte(2), .string("two")])]),
        .dictionary(key: "s", value: "v", []),
    ]

    @Test func echoesEveryTypeBlueZUsesUnchanged() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { server.close(); client.close() }
        try await server.export(Self.echoObject())
        for value in Self.values {
            let reply = try await client.call(destination: server.uniqueName, path: Self.echoPath,
                                              interface: "org.nearplay.Test", member: "Echo", body: [.variant(value)])
            #expect(reply == [.variant(value)], "round trip of \(value.signature)")
        }
    }

    @Test func computesSignaturesOfNestedContainers() {
        #expect(DBusValue.stringVariantDictionary([]).signature == "a{sv}")
        #expect(DBusValue.dictionary(key: "o", value: "a{sa{sv}}", []).signature == "a{oa{sa{sv}}}")
        #expect(DBusValue.structure([.byte(1), .bytes([])]).signature == "(yay)")
    }

    /// libdbus aborts the process on values that do not fit their container; these must be errors.
    @Test(arguments: [
        DBusValue.array(element: "s", [.int32(1)]),
        .dictionary(key: "s", value: "v", [DBusDictionaryEntry(.string("a"), .string("not a variant"))]),
        .dictionary(key: "as", value: "v", []),
        .structure([]),
        .string("nul\u{0}inside"),
        .objectPath("no-leading-slash"),
        .signature("a{"),
        .array(element: "ss", []),
    ])
    func rejectsMalformedValuesWithAnError(value: DBusValue) async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let client = try await bus.connect()
        defer { client.close() }
        await #expect(throws: DBusError.self) {
            try await client.call(destination: client.uniqueName, path: Self.echoPath,
                                  interface: "org.nearplay.Test", member: "Echo", body: [value])
        }
        // The connection is still usable afterwards.
        #expect(try await client.nameOwner(of: DBusConnection.busName) == DBusConnection.busName)
    }

    @Test func rejectsInvalidHeaderNames() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let client = try await bus.connect()
        defer { client.close() }
        await #expect(throws: DBusError.self) {
            try await client.call(destination: "org..bad", path: "/", interface: "org.nearplay.Test", member: "Echo")
        }
        await #expect(throws: DBusError.self) {
            try await client.call(destination: DBusConnection.busName, path: "/", interface: "not an interface", member: "Echo")
        }
        await #expect(throws: DBusError.self) {
            try await client.call(destination: DBusConnection.busName, path: "/", interface: "org.nearplay.Test", member: "Bad.Member")
        }
    }

    /// `DBusObjectPath("…")` with a literal is literal coercion, not the checking initializer.
    private func checked(_ text: String) -> DBusObjectPath? { DBusObjectPath(text) }

    @Test func objectPathsAreValidated() {
        #expect(checked("/") != nil)
        #expect(checked("/org/bluez/hci0") != nil)
        #expect(checked("/org/bluez/") == nil)
        #expect(checked("/org//bluez") == nil)
        #expect(checked("org/bluez") == nil)
        #expect(checked("/org/blue-z") == nil)
        #expect(checked("/org/bluez/hci0/dev_1")!.isDescendant(of: "/org/bluez"))
        #expect(!checked("/org/bluezz")!.isDescendant(of: "/org/bluez"))
    }
}
