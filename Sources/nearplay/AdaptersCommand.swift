import ArgumentParser
import Radio

struct AdaptersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adapters",
        abstract: "List the Bluetooth adapters BlueZ knows: powered state and free advertising instances."
    )

    func run() async throws {
        let adapters: [BlueZAdapter]
        do {
            adapters = try await BlueZAdapters.list()
        } catch {
            throw RadioFailure.report(error)
        }
        guard !adapters.isEmpty else {
            Diagnostics.warning("bluetoothd is running but has no adapter: plug one in, or check `rfkill list` and `dmesg | grep -i bluetooth`.")
            return
        }
        StandardOutput.line(pad("adapter", 8) + "  " + pad("address", 17) + "  " + pad("powered", 7) + "  "
            + pad("scanning", 8) + "  advertising")
        for adapter in adapters {
            let advertising: String
            if let capacity = adapter.advertising {
                advertising = "\(capacity.freeInstances) free, \(capacity.activeInstances) in use"
                    + (capacity.controlsInterval ? "" : " (no interval control)")
            } else {
                advertising = "not supported"
            }
            StandardOutput.line(pad(adapter.name, 8) + "  " + pad(adapter.address, 17) + "  "
                + pad(adapter.powered ? "yes" : "no", 7) + "  " + pad(adapter.discovering ? "yes" : "no", 8) + "  " + advertising)
        }
        if adapters.contains(where: { !$0.powered }) {
            Diagnostics.write("Power an adapter on with `bluetoothctl power on` (or `bluetoothctl select <address>` first).\n")
        }
    }
}
