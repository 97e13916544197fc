// Fuzz target: HCI LE advertising report events (legacy, extended), in each framing; command
// results; and the raw HCI radio's decoder (fragments joined), which must append nothing when
// it throws.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHCIEvents(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let bytes = fuzzBytes(data, count)
    for framing in [HCIEvent.Framing.h4, .eventCode, .detect] {
        if let reports = try? HCIEvent.advertisingReports(bytes, framing: framing) {
            for report in reports { _ = BeaconFrame.decodeAll(AdvertisingData(parsing: report.data)) }
        }
    }
    _ = try? HCIEvent.commandResult(bytes)
    var decoder = HCIAdvertisementDecoder()
    var advertisements: [Advertisement] = []
    do {
        try decoder.decode(bytes, time: 0, into: &advertisements)
    } catch {
        precondition(advertisements.isEmpty, "a refused event appended advertisements")
    }
    return 0
}
