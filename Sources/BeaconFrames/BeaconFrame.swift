/// Any frame Nearplay knows how to decode from advertising data.
public enum BeaconFrame: Sendable, Hashable {
    case iBeacon(IBeacon)
    case altBeacon(AltBeacon)
    case eddystone(EddystoneFrame)
    case exposureNotification(ExposureNotification)

    /// Every frame found in the advertising data, in structure order, and for the structures
    /// that looked like a frame but were not, why not (offsets into the whole advertising data).
    public static func decodeAll(_ ad: AdvertisingData) -> (frames: [BeaconFrame], nearMisses: [FrameError]) {
        var frames: [BeaconFrame] = []
        var misses: [FrameError] = []
        for structure in ad.structures {
            let single = AdvertisingData(structures: [structure])
            func attempt(_ decode: () throws(FrameError) -> BeaconFrame) {
                do { frames.append(try decode()) } catch { misses.append(error) }
            }
            let d = structure.data
            switch structure.type {
            case .manufacturerSpecificData where structure.companyIdentifier == .apple && d.count >= 3 && d[2] == 0x02:
                attempt { () throws(FrameError) in .iBeacon(try IBeacon(advertisingData: single)) }
            case .manufacturerSpecificData where d.count >= 3 && d[2] == 0xBE && (d.count == 3 || d[3] == 0xAC):
                attempt { () throws(FrameError) in .altBeacon(try AltBeacon(advertisingData: single)) }
            case .serviceData16 where structure.serviceUUID16 == EddystoneFrame.serviceUUID:
                attempt { () throws(FrameError) in .eddystone(try EddystoneFrame(advertisingData: single)) }
            case .serviceData16 where structure.serviceUUID16 == ExposureNotification.serviceUUID:
                attempt { () throws(FrameError) in .exposureNotification(try ExposureNotification(advertisingData: single)) }
            default:
                continue
            }
        }
        return (frames, misses)
    }

    /// The identity to track, for the frames that carry one.
    public var identity: BeaconIdentity? {
        switch self {
        case let .iBeacon(frame): frame.identity
        case let .altBeacon(frame): frame.identity
        case let .eddystone(.uid(frame)): frame.identity
        default: nil
        }
    }
}
