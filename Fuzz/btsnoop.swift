// Fuzz target: btsnoop capture files (datalinks 1001, 1002 and 2001), and the HCI events in them.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBTSnoop(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let bytes = fuzzBytes(data, count)
    _ = BTSnoop.isBTSnoop(bytes)
    if let file = try? BTSnoop.parse(bytes) {
        for record in file.records { _ = try? HCIEvent.advertisingReports(record.data, framing: .detect) }
    }
    return 0
}
