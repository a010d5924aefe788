// The owner verifies the bot's device by emoji (SAS) from their client (Element: the bot's
// session → Verify → by emoji). Only a request from one of the owner's ids is accepted; others
// are cancelled. The bot has no screen: it shows the seven emojis in `hearth status` and the log
// (on the owner's own machine, not through the homeserver being guarded against), and accepts
// the comparison as the owner's: the owner presses "They match" in their client only when both
// show the same, and the verification completes only then. Once done, the bot's crypto store
// (kept in the home) records the owner's device as verified, so the state outlives restarts.
import type { MatrixClient } from "matrix-js-sdk";
import { CryptoEvent, VerificationPhase, VerificationRequestEvent, VerifierEvent, type ShowSasCallbacks, type VerificationRequest } from "matrix-js-sdk/lib/crypto-api/index.js";
import type { Logger } from "../../process/log.ts";

/** What a verification under way shows (`hearth status`), or undefined when none is. */
export type VerificationView = (shown: string | undefined) => void;

export function acceptOwnerVerification(client: MatrixClient, ownerIds: readonly string[], log: Logger, show: VerificationView, done: () => void): void {
  client.on(CryptoEvent.VerificationRequestReceived, (request: VerificationRequest) => {
    const who = request.otherUserId;
    if (!ownerIds.includes(who)) {
      log.info("matrix.verification_refused", { from: who });
      void request.cancel().catch(() => {});
      return;
    }
    log.info("matrix.verification_requested", { from: who, device: request.otherDeviceId });
    let hooked = false;
    const onChange = () => {
      const verifier = request.verifier;
      if (verifier && !hooked) {
        hooked = true;
        verifier.on(VerifierEvent.ShowSas, (sas: ShowSasCallbacks) => {
          const emojis = (sas.sas.emoji ?? []).map(([emoji, name]) => `${emoji} ${name}`).join(" · ");
          show(`verifying with ${who} (device ${request.otherDeviceId ?? "?"}): compare ${emojis} with your client's, and press "They match" there only if they do`);
          log.info("matrix.verification_emojis", { from: who, device: request.otherDeviceId, emojis });
          void sas.confirm().catch((error: unknown) => log.warn("matrix.verification_failed", { from: who, error }));
        });
        void verifier.verify().catch(() => {});
      }
      if (request.phase === VerificationPhase.Done) {
        log.info("matrix.verification_done", { from: who, device: request.otherDeviceId });
        show(undefined);
        done();
      } else if (request.phase === VerificationPhase.Cancelled) {
        log.info("matrix.verification_cancelled", { from: who, device: request.otherDeviceId, reason: request.cancellationCode ?? undefined });
        show(undefined);
      }
    };
    request.on(VerificationRequestEvent.Change, onChange);
    void request.accept().catch((error: unknown) => log.warn("matrix.verification_failed", { from: who, error }));
  });
}
