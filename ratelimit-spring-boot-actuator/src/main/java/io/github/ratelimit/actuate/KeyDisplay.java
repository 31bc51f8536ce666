package io.github.ratelimit.actuate;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Collection;
import java.util.HexFormat;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.EndpointAccessResolver;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.core.env.PropertyResolver;

/**
 * How the {@code ratelimits} endpoint shows the keys it lists and reads: a key is often a credential (an API key, a
 * session, a user's id), and whoever may read the endpoint is not always whoever may see those. By default a key
 * that is a client's address is masked ({@code 203.0.113.x}, {@code 2001:db8:1:x}) and any other is shown as a short
 * keyed fingerprint, {@code hmac:} and the first 12 hex digits of its HMAC-SHA256, which names it without giving it
 * away; with no secret configured, each instance draws its own at start-up, so that its fingerprints cannot be
 * computed from a guessed key elsewhere. A key is read by what is shown of it, among the policy's heaviest keys.
 * Raw keys are shown, and read by their value, only when granted ({@link #raw}).
 *
 * @since 0.4.0
 */
public final class KeyDisplay {

	private static final HexFormat HEX = HexFormat.of();

	private final @Nullable SecretKeySpec secret;

	private final boolean maskClientIp;

	private KeyDisplay(@Nullable SecretKeySpec secret, boolean maskClientIp) {
		this.secret = secret;
		this.maskClientIp = maskClientIp;
	}

	/**
	 * Return the display the configuration asks for: raw keys only with {@code ratelimit.heavy-hitters.show-keys=true}
	 * and the endpoint's access {@code unrestricted} (whoever may read it may also reset keys and change policies),
	 * else fingerprints keyed by {@code ratelimit.heavy-hitters.secret} (or one drawn by this instance).
	 * @param properties where {@code ratelimit.heavy-hitters.show-keys} and {@code .secret} are read
	 * @param access the access granted to endpoints ({@code management.endpoint.ratelimits.access}, capped by
	 * {@code management.endpoints.access.max-permitted})
	 * @param maskClientIp whether raw keys that are addresses are masked all the same
	 * @return the display
	 */
	public static KeyDisplay of(PropertyResolver properties, EndpointAccessResolver access, boolean maskClientIp) {
		boolean raw = properties.getProperty("ratelimit.heavy-hitters.show-keys", Boolean.class, false)
				&& access.accessFor(EndpointId.of("ratelimits"), Access.READ_ONLY) == Access.UNRESTRICTED;
		return raw ? raw(maskClientIp) : fingerprinted(properties.getProperty("ratelimit.heavy-hitters.secret"));
	}

	/**
	 * Return the default display: addresses masked, other keys fingerprinted.
	 * @param secret the fingerprints' secret, the same on instances that should show the same fingerprint, or
	 * {@code null} (or blank) for one drawn at random by this instance
	 * @return the display
	 */
	public static KeyDisplay fingerprinted(@Nullable String secret) {
		byte[] key;
		if (secret == null || secret.isBlank()) {
			key = new byte[32];
			new SecureRandom().nextBytes(key);
		}
		else {
			key = secret.getBytes(StandardCharsets.UTF_8);
		}
		return new KeyDisplay(new SecretKeySpec(key, "HmacSHA256"), true);
	}

	/**
	 * Return the display of raw keys, and reads by a key's value: only where every caller that can reach the endpoint
	 * may see the limited clients' credentials.
	 * @param maskClientIp whether keys that are addresses are masked all the same
	 * @return the display
	 */
	public static KeyDisplay raw(boolean maskClientIp) {
		return new KeyDisplay(null, maskClientIp);
	}

	/**
	 * Return whether a key may be read by its value.
	 * @return whether keys are shown raw
	 */
	public boolean showsRawKeys() {
		return this.secret == null;
	}

	/**
	 * Return what is shown of a key.
	 * @param key the key, as the limiter sees it
	 * @return the key, its address masked, or its fingerprint
	 */
	public String show(String key) {
		String masked = ClientIpMask.mask(key);
		if (!masked.equals(key)) {
			return this.maskClientIp ? masked : key;
		}
		return (this.secret != null) ? fingerprint(this.secret, key) : key;
	}

	/**
	 * Return the key a read names: the one of {@code keys} shown as it, or the name itself where raw keys are shown.
	 * @param shown what the read names
	 * @param keys the keys it may name (the policy's heaviest)
	 * @return the key, or {@code null} if it names none, or several (two addresses masked alike)
	 */
	@Nullable String keyOf(String shown, Collection<String> keys) {
		if (showsRawKeys()) {
			return shown;
		}
		String found = null;
		for (String key : keys) {
			if (show(key).equals(shown)) {
				if (found != null && !found.equals(key)) {
					return null;
				}
				found = key;
			}
		}
		return found;
	}

	private static String fingerprint(SecretKeySpec secret, String key) {
		try {
			Mac mac = Mac.getInstance("HmacSHA256");
			mac.init(secret);
			byte[] digest = mac.doFinal(key.getBytes(StandardCharsets.UTF_8));
			return "hmac:" + HEX.formatHex(digest, 0, 6);
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("HmacSHA256 is part of every Java runtime", ex);
		}
	}

}
