import BusTestSupport
import DBus
import Testing

@Suite struct SignalTests {
    @Test func deliversOnlyMatchingSignalsInOrder() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let sender = try await bus.connect()
        let receiver = try await bus.connect()
        defer { sender.close(); receiver.close() }
        let signals = try await receiver.signals(matching: [MatchRule(interface: "org.nearplay.Test", member: "Tick")])
        var batch: [DBusMessage] = []
        for index in 0..<5 {
            batch.append(.signal(path: "/org/nearplay/a", interface: "org.nearplay.Test", member: "Tock", body: [.int32(Int32(index))]))
            batch.append(.signal(path: "/org/nearplay/a", interface: "org.nearplay.Test", member: "Tick", body: [.int32(Int32(index))]))
        }
        try await sender.send(batch)
        var received: [Int] = []
        for try await signal in signals {
            #expect(signal.member == "Tick")
            #expect(signal.sender == sender.uniqueName)
            received.append(signal.body.first?.intValue ?? -1)
            if received.count == 5 { break }
        }
        #expect(received == [0, 1, 2, 3, 4])
    }

    @Test func sendsCopiesOfOneMessage() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let sender = try await bus.connect()
        let receiver = try await bus.connect()
        defer { sender.close(); receiver.close() }
        let signals = try await receiver.signals(matching: [MatchRule(interface: "org.nearplay.Test")])
        let signal = DBusMessage.signal(path: "/org/nearplay/a", interface: "org.nearplay.Test", member: "Tick",
                                        body: [.stringVariantDictionary([("RSSI", .int16(-60))])])
        try await sender.send(signal, copies: 3)
        try await sender.send(.signal(path: "/org/nearplay/a", interface: "org.nearplay.Test", member: "End"))
        var members: [String] = []
        for try await received in signals {
            members.append(received.member ?? "")
            if received.member == "Tick" { #expect(received.body == signal.body) }
            if received.member == "End" { break }
        }
        #expect(members == ["Tick", "Tick", "Tick", "End"])
    }

    @Test func matchRulesApplyPathNamespaceAndFirstArgument() {
        var signal = DBusMessage.signal(path: "/org/bluez/hci0/dev_1", interface: "org.freedesktop.DBus.Properties",
                                        member: "PropertiesChanged", body: [.string("org.bluez.Device1")])
        signal.sender = ":1.7"
        #expect(MatchRule(pathNamespace: "/org/bluez").matches(signal))
        #expect(!MatchRule(pathNamespace: "/org/bluez/hci1").matches(signal))
        #expect(MatchRule(arg0: "org.bluez.Device1").matches(signal))
        #expect(!MatchRule(arg0: "org.bluez.Adapter1").matches(signal))
        #expect(MatchRule(sender: "org.bluez").matches(signal), "well-known senders are left to the bus")
        #expect(!MatchRule(sender: ":1.8").matches(signal))
    }

    @Test func writesMatchRulesInTheBusSyntax() {
        let rule = MatchRule(sender: "org.bluez", member: "PropertiesChanged", pathNamespace: "/org/bluez", arg0: "it's")
        #expect(rule.description
            == "type='signal',sender='org.bluez',member='PropertiesChanged',path_namespace='/org/bluez',arg0='it'\\''s'")
    }

    @Test func endingTheIterationUnsubscribes() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let sender = try await bus.connect()
        let receiver = try await bus.connect()
        defer { sender.close(); receiver.close() }
        do {
            let signals = try await receiver.signals(matching: [MatchRule(interface: "org.nearplay.Test")])
            try await sender.send(.signal(path: "/", interface: "org.nearplay.Test", member: "Once"))
            for try await _ in signals { break }
        }
        // The bus answers calls in order, so once this returns the RemoveMatch has been processed.
        _ = try await receiver.nameOwner(of: DBusConnection.busName)
        let later = try await receiver.signals(matching: [MatchRule(interface: "org.nearplay.Other")])
        try await sender.send([.signal(path: "/", interface: "org.nearplay.Test", member: "Again"),
                               .signal(path: "/", interface: "org.nearplay.Other", member: "Marker")])
        for try await signal in later {
            #expect(signal.member == "Marker")
            break
        }
    }

    @Test func dropsTheOldestSignalsBeyondTheBufferLimit() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let sender = try await bus.connect()
        let receiver = try await bus.connect()
        defer { sender.close(); receiver.close() }
        let signals = try await receiver.signals(matching: [MatchRule(interface: "org.nearplay.Test")], bufferLimit: 3)
        try await sender.send((0..<10).map { index in
            .signal(path: "/", interface: "org.nearplay.Test", member: "Tick", body: [.int32(Int32(index))])
        })
        // Round trips in order on both connections: once they return, all ten signals have reached
        // the receiver's queue unread.
        _ = try await sender.nameOwner(of: DBusConnection.busName)
        _ = try await receiver.nameOwner(of: DBusConnection.busName)
        var received: [Int] = []
        for try await signal in signals {
            received.append(signal.body.first?.intValue ?? -1)
            if received.count == 3 { break }
        }
        #expect(received == [7, 8, 9])
    }

    @Test func cancellingTheReaderEndsTheIteration() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let receiver = try await bus.connect()
        defer { receiver.close() }
        let signals = try await receiver.signals(matching: [MatchRule(interface: "org.nearplay.Test")])
        let reader = Task {
            var count = 0
            for try await _ in signals { count += 1 }
            return count
        }
        try await Task.sleep(for: .milliseconds(50))
        reader.cancel()
        #expect(try await reader.value == 0)
    }

    /// With coalescing, a stream of signals is read on a beat: each waits in the socket for up to
    /// the interval, none is lost or reordered, and replies to our calls are never held.
    @Test func coalescingHoldsSignalsButNotReplies() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let sender = try await bus.connect()
        // A long interval, so a loaded machine cannot blur the two bounds below (0.37 s seen for a
        // reply while the whole suite ran on two cores, and once more than 0.7 s).
        let receiver = try await DBusConnection.connect(address: bus.address, signalCoalescing: .seconds(4))
        defer { sender.close(); receiver.close() }
        let signals = try await receiver.signals(matching: [MatchRule(interface: "org.nearplay.Test")])
        let sent = ContinuousClock.now
        try await sender.send((0..<20).map { index in
            .signal(path: "/", interface: "org.nearplay.Test", member: "Tick", body: [.int32(Int32(index))])
        })
        var received: [Int] = []
        for try await signal in signals {
            received.append(signal.body.first?.intValue ?? -1)
            if received.count == 20 { break }
        }
        #expect(received == Array(0..<20))
        #expect(sent.duration(to: .now) >= .milliseconds(3600), "the signals were read before the interval was up")

        // A call while signals keep coming: its reply is read as soon as it arrives.
        let stream = Task {
            for index in 0..<400 {
                try await sender.send(.signal(path: "/", interface: "org.nearplay.Test", member: "Tick", body: [.int32(Int32(index))]))
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        defer { stream.cancel() }
        try await Task.sleep(for: .milliseconds(50))
        let called = ContinuousClock.now
        _ = try await receiver.nameOwner(of: DBusConnection.busName)
        #expect(called.duration(to: .now) < .seconds(2), "the reply waited with the signals")
    }

    @Test func refusesASecondConcurrentReader() async throws {
        let bus = try await PrivateBus()
        defer { bus.stop() }
        let sender = try await bus.connect()
        let receiver = try await bus.connect()
        defer { sender.close(); receiver.close() }
        let signals = try await receiver.signals(matching: [MatchRule(interface: "org.nearplay.Test")])
        let first = Task { () -> String? in
            for try await signal in signals { return signal.member }
            return nil
        }
        try await Task.sleep(for: .milliseconds(100))
        let error = await #expect(throws: DBusError.self) {
            for try await _ in signals {}
        }
        #expect(error?.message.contains("two tasks") == true)
        try await sender.send(.signal(path: "/", interface: "org.nearplay.Test", member: "Tick"))
        #expect(try await first.value == "Tick", "the first reader keeps its subscription")
    }
}
