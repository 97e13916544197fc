import BusTestSupport
import DBus
import Testing

/// Exported objects answer the standard interfaces as bluetoothd expects of its clients.
@Suite struct ExportedObjectTests {
    static let root: DBusObjectPath = "/org/nearplay"
    static let child: DBusObjectPath = "/org/nearplay/advertisement0"

    static func childObject() -> DBusExportedObject {
        DBusExportedObject(path: child, interfaces: [
            DBusExportedInterface(name: "org.bluez.LEAdvertisement1",
                                  methods: [DBusExportedMethod(name: "Release") { _ in [] }],
                                  properties: ["Type": .string("broadcast"), "MinInterval": .uint32(100)]),
        ])
    }

    @Test func servesPropertiesGetAndGetAllAndRefusesSet() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { server.close(); client.close() }
        try await server.export(Self.childObject())
        let properties = "org.freedesktop.DBus.Properties"
        let one = try await client.call(destination: server.uniqueName, path: Self.child, interface: properties,
                                        member: "Get", body: [.string("org.bluez.LEAdvertisement1"), .string("Type")])
        #expect(one == [.variant(.string("broadcast"))])
        let all = try await client.call(destination: server.uniqueName, path: Self.child, interface: properties,
                                        member: "GetAll", body: [.string("org.bluez.LEAdvertisement1")])
        #expect(all.first?.stringKeyedValue == ["Type": .string("broadcast"), "MinInterval": .uint32(100)])
        let error = await #expect(throws: DBusError.self) {
            try await client.call(destination: server.uniqueName, path: Self.child, interface: properties, member: "Set",
                                  body: [.string("org.bluez.LEAdvertisement1"), .string("Type"), .variant(.string("peripheral"))])
        }
        #expect(error?.name == DBusError.propertyReadOnlyName)
    }

    @Test func introspectsInterfacesAndChildNodes() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { server.close(); client.close() }
        try await server.export(Self.childObject())
        let introspectable = "org.freedesktop.DBus.Introspectable"
        let parent = try await client.call(destination: server.uniqueName, path: Self.root, interface: introspectable,
                                           member: "Introspect")
        #expect(parent.first?.stringValue?.contains("<node name=\"advertisement0\"/>") == true)
        let leaf = try await client.call(destination: server.uniqueName, path: Self.child, interface: introspectable,
                                         member: "Introspect").first?.stringValue ?? ""
        #expect(leaf.contains("<interface name=\"org.bluez.LEAdvertisement1\">"))
        #expect(leaf.contains("<method name=\"Release\">"))
        #expect(leaf.contains("<property name=\"MinInterval\" type=\"u\" access=\"read\"/>"))
    }

    @Test func objectManagerListsAndAnnouncesObjectsBelowIt() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let server = try await bus.connect()
        let client = try await bus.connect()
        defer { server.close(); client.close() }
        try await server.export(DBusExportedObject(path: Self.root, interfaces: [], isObjectManager: true))
        let announcements = try await client.signals(matching: [
            MatchRule(sender: server.uniqueName, interface: "org.freedesktop.DBus.ObjectManager"),
        ])
        try await server.export(Self.childObject())
        let managed = try await client.call(destination: server.uniqueName, path: Self.root,
                                            interface: "org.freedesktop.DBus.ObjectManager", member: "GetManagedObjects")
        let entries = managed.first?.dictionaryValue ?? []
        #expect(entries.map(\.key) == [.objectPath(Self.child)])
        #expect(entries.first?.value.stringKeyedValue?["org.bluez.LEAdvertisement1"]?.stringKeyedValue?["Type"] == .string("broadcast"))
        try await server.unexport(Self.child)
        var members: [String] = []
        for try await signal in announcements {
            members.append(signal.member ?? "")
            #expect(signal.body.first == .objectPath(Self.child))
            if members.count == 2 { break }
        }
        #expect(members == ["InterfacesAdded", "InterfacesRemoved"])
    }
}
