import Agent
import Foundation
import Radio
import Testing

/// The agent's `radio` key names its backend the way the commands' `--backend` does, through
/// the one `RadioSelection`.
@Suite struct RadioConfigurationTests {
    static func configuration(_ radio: String) throws -> AgentConfiguration {
        try JSONDecoder().decode(AgentConfiguration.self, from: Data(#"{"radio": \#(radio)}"#.utf8))
    }

    @Test func theHCIBackendScansAndAdvertisesOnTheNamedController() throws {
        let configuration = try Self.configuration(#"{"backend": "hci", "adapter": "hci1"}"#)
        try configuration.validate()
        let radio = try AgentRadio.make(configuration.radio)
        #expect(radio.description == "raw HCI on hci1")
        #expect(radio.scanner is HCIScanner)
        #expect(radio.advertiser is HCIAdvertiser)
        #expect((radio.scanner as? HCIScanner)?.controller.name == "hci1")
        // Without an adapter: hci0.
        let plain = try AgentRadio.make(try Self.configuration(#"{"backend": "hci"}"#).radio)
        #expect(plain.description == "raw HCI on hci0")
    }

    @Test(arguments: [
        (#"{"backend": "hci", "adapter": "bluetooth0"}"#, "radio.adapter takes an adapter name such as hci0"),
        (#"{"backend": "hci", "device": "alice"}"#, "radio.device and radio.air_socket are for the simulated air"),
        (#"{"backend": "sim"}"#, "the sim backend needs radio.device NAME"),
        (#"{"backend": "replay"}"#, "radio.file: the replay backend needs the trace to replay."),
    ])
    func namesTheKeyAtFault(radio: String, message: String) throws {
        let configuration = try Self.configuration(radio)
        let error = #expect(throws: AgentError.self) { try configuration.validate() }
        #expect(error?.description.contains(message) == true, "\(error.map { "\($0)" } ?? "no error")")
    }
}
