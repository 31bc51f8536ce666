package io.github.ratelimit.engine;

import java.lang.management.ManagementFactory;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import io.github.ratelimit.store.SharedChanges;
import org.jspecify.annotations.Nullable;

/**
 * Who made a run-time change kept in the shared store, on which instance and when, and, with a secret every instance
 * knows, its HMAC-SHA256 signature: written on the changes this instance keeps, checked on those it reads, so that
 * a change no operator made through an instance is refused.
 */
final class ChangeProvenance {

	/** Who made a change kept in the store: the endpoint's caller. */
	static final String CHANGED_BY = "changed-by";

	/** The instance that kept it: its process id and host. */
	static final String CHANGED_ON = "changed-on";

	/** When it was kept, as an ISO-8601 instant. */
	static final String CHANGED_AT = "changed-at";

	/** The change's HMAC-SHA256 under the secret, in Base64. */
	static final String SIGNATURE = "signature";

	/** What a change keeps of its provenance, beside its attributes. */
	static final Set<String> KEYS = Set.of(CHANGED_BY, CHANGED_ON, CHANGED_AT, SIGNATURE);

	/** The longest author kept with a change: longer names are cut. */
	private static final int LONGEST_AUTHOR = 128;

	private final @Nullable SecretKeySpec secret;

	/** This instance, as the changes it keeps name it. */
	private final String origin = ManagementFactory.getRuntimeMXBean().getName();

	ChangeProvenance(@Nullable String secret) {
		this.secret = (secret == null || secret.isEmpty()) ? null
				: new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
	}

	/** Whether changes are signed, and those read unsigned refused. */
	boolean isSigned() {
		return this.secret != null;
	}

	/** The change with who made it, where and when, signed if there is a secret. */
	Map<String, String> stamped(String policy, Map<String, String> values, String author) {
		Map<String, String> change = new TreeMap<>(values);
		change.put(CHANGED_BY, (author.length() > LONGEST_AUTHOR) ? author.substring(0, LONGEST_AUTHOR) : author);
		change.put(CHANGED_ON, this.origin);
		change.put(CHANGED_AT, Instant.now().toString());
		if (this.secret != null) {
			change.put(SIGNATURE, signature(this.secret, policy, change));
		}
		return Collections.unmodifiableMap(new LinkedHashMap<>(change));
	}

	/** HMAC-SHA256 over the policy's name and every attribute but the signature, in the attributes' order. */
	static String signature(SecretKeySpec secret, String policy, Map<String, String> change) {
		Map<String, String> signed = new TreeMap<>(change);
		signed.remove(SIGNATURE);
		String canonical = URLEncoder.encode(policy, StandardCharsets.UTF_8) + "\n" + SharedChanges.encode(signed);
		try {
			Mac mac = Mac.getInstance("HmacSHA256");
			mac.init(secret);
			return Base64.getEncoder().encodeToString(mac.doFinal(canonical.getBytes(StandardCharsets.UTF_8)));
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("HmacSHA256 is not available: " + ex.getMessage(), ex);
		}
	}

	/** Why a change read from the store is no operator's, or {@code null} if it may be. */
	@Nullable String refusal(String name, Map<String, String> values) {
		if (SharedChanges.encode(values).length() > RuntimeChanges.MAX_CHANGE_LENGTH) {
			return "it is longer than " + RuntimeChanges.MAX_CHANGE_LENGTH + " characters";
		}
		for (String attribute : values.keySet()) {
			if (!RuntimeChanges.ATTRIBUTES.contains(attribute) && !attribute.equals(CHANGED_BY) && !attribute.equals(CHANGED_ON)
					&& !attribute.equals(CHANGED_AT) && !attribute.equals(SIGNATURE)) {
				return "'" + attribute + "' cannot be changed at run time";
			}
		}
		if (!values.containsKey(CHANGED_BY) || !values.containsKey(CHANGED_ON) || !values.containsKey(CHANGED_AT)) {
			return "it does not say who made it, on which instance and when";
		}
		if (this.secret != null) {
			String signature = values.get(SIGNATURE);
			if (signature == null) {
				return "it is unsigned, while ratelimit.changes.secret is set";
			}
			if (!MessageDigest.isEqual(signature.getBytes(StandardCharsets.UTF_8),
					signature(this.secret, name, values).getBytes(StandardCharsets.UTF_8))) {
				return "its signature is not that of ratelimit.changes.secret";
			}
		}
		return null;
	}

}
