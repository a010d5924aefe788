// The channel conformance scenarios for Matrix: the real daemon on matrix-js-sdk against the fake homeserver.
import { MATRIX_TRAITS, startMatrixPlatform } from "./matrix.ts";
import { conformanceSuite } from "./suite.ts";

conformanceSuite("matrix", MATRIX_TRAITS, startMatrixPlatform);
