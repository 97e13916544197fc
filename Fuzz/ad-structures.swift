// Fuzz target: advertising data from the air, and each beacon decoder on it.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzADStructures(_ data: UnsafePointer<UInt8>?, _ count: Int) -> Int32 {
    let bytes = fuzzBytes(data, count)
    let advertisingData = AdvertisingData(parsing: bytes)
    _ = BeaconFrame.decodeAll(advertisingData)
    _ = try? IBeacon(advertisingData: advertisingData)
    _ = try? AltBeacon(advertisingData: advertisingData)
    _ = try? EddystoneFrame(advertisingData: advertisingData)
    _ = try? ExposureNotification(advertisingData: advertisingData)
    // The same bytes as the payload each decoder gets once its AD structure is found.
    if bytes.count >= 2 {
        let company = CompanyIdentifier(UInt16(bytes[0]) | UInt16(bytes[1]) << 8)
        let payload = Array(bytes.dropFirst(2))
        _ = try? IBeacon(company: company, manufacturerData: payload)
        _ = try? AltBeacon(company: company, manufacturerData: payload)
    }
    _ = try? EddystoneFrame(serviceData: bytes)
    _ = try? ExposureNotification(serviceData: bytes)
    _ = try? EddystoneURL.decode(bytes)
    return 0
}
