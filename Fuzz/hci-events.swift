// Fuzz target: HCI LE advertising report events (legacy, extended), in each framing.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHCIEvents(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let bytes = fuzzBytes(data, count)
    for framing in [HCIEvent.Framing.h4, .eventCode, .detect] {
        if let reports = try? HCIEvent.advertisingReports(bytes, framing: framing) {
            for report in reports { _ = BeaconFrame.decodeAll(AdvertisingData(parsing: report.data)) }
        }
    }
    return 0
}
