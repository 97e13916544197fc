/// A Google/Apple Exposure Notification frame: service data for UUID 0xFD6F holding a 16-byte
/// Rolling Proximity Identifier and 4 bytes of Associated Encrypted Metadata (Exposure
/// Notification Bluetooth Specification v1.2). Not a beacon Nearplay ranges; decoded so that
/// `nearplay decode` can say what it is.
public struct ExposureNotification: Sendable, Hashable {
    public var rollingProximityIdentifier: [UInt8]
    public var associatedEncryptedMetadata: [UInt8]

    public static let serviceUUID: UInt16 = 0xFD6F

    public init(serviceData data: [UInt8]) throws(FrameError) {
        guard data.count == 20 else {
            throw data.count < 20
                ? .truncated(what: "Exposure Notification frame", offset: 0, needed: 20, available: data.count)
                : .wrongLength(what: "Exposure Notification frame", offset: 0, expected: "20 bytes", found: data.count)
        }
        rollingProximityIdentifier = Array(data[0..<16])
        associatedEncryptedMetadata = Array(data[16..<20])
    }

    public init(advertisingData: AdvertisingData) throws(FrameError) {
        guard let structure = advertisingData.all(.serviceData16).first(where: { $0.serviceUUID16 == Self.serviceUUID }) else { throw .notFound(what: "Exposure Notification service data (UUID 0xFD6F)") }
        do {
            try self.init(serviceData: Array(structure.data.dropFirst(2)))
        } catch {
            throw error.shifted(by: structure.offset + 4)
        }
    }
}
