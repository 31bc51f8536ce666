package io.github.ratelimit.engine;

import java.net.InetAddress;
import java.security.Principal;
import java.util.List;
import java.util.UUID;

import org.jspecify.annotations.Nullable;

/**
 * The text of a key value, for the values whose text is their value: text, numbers of the JDK, UUIDs, enums (their
 * name), booleans, characters, IP addresses and principals (their name). Any other object's {@code toString()} may
 * be its identity ({@code [Ljava.lang.String;@1b2c}), a new key per request, or anything its author chose, so it is
 * not used.
 */
final class KeyText {

	/** What a key may be, for messages. */
	static final String ALLOWED = "text, a number, a UUID, an enum, a Boolean, an InetAddress or a Principal";

	private static final List<Class<?>> ALLOWED_TYPES = List.of(CharSequence.class, Number.class, UUID.class,
			Enum.class, Boolean.class, Character.class, InetAddress.class, Principal.class);

	private KeyText() {
	}

	/**
	 * Return whether a value declared as {@code type} may have a value-based text: an allowed type, a primitive, or a
	 * supertype of one (such as {@code Object}), which is checked again on each value.
	 */
	static boolean mayHaveText(Class<?> type) {
		if (type.isPrimitive()) {
			return type != void.class;
		}
		for (Class<?> allowed : ALLOWED_TYPES) {
			if (allowed.isAssignableFrom(type) || type.isAssignableFrom(allowed)) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Return the value's text, or {@code null} if it has none based on its value.
	 * @throws RuntimeException whatever {@code toString()} or {@code getName()} throws
	 */
	static @Nullable String of(Object value) {
		if (value instanceof ClientAddress address) {
			return address.key();
		}
		if (value instanceof CharSequence text) {
			return text.toString();
		}
		if (value instanceof Number number) {
			// The JDK's numbers print their value; a Number of the application's may not.
			return number.getClass().getName().startsWith("java.") ? number.toString() : null;
		}
		if (value instanceof Enum<?> constant) {
			return constant.name();
		}
		if (value instanceof UUID || value instanceof Boolean || value instanceof Character) {
			return value.toString();
		}
		if (value instanceof InetAddress address) {
			return address.getHostAddress();
		}
		if (value instanceof Principal principal) {
			return principal.getName();
		}
		return null;
	}

}
