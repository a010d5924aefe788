// The channel conformance scenarios for WhatsApp: the real daemon's WhatsApp channel over the fake at its socket interface.
import { conformanceSuite } from "./suite.ts";
import { startWhatsAppPlatform, WHATSAPP_TRAITS } from "./whatsapp.ts";

conformanceSuite("whatsapp", WHATSAPP_TRAITS, startWhatsAppPlatform);
