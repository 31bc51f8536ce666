package io.github.ratelimit.sample;

import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The sample's own settings.
 *
 * @param apiKeys the API keys this API issued, each with its plan (a real application keeps them in its database)
 * @param adminToken the token a request to {@code /admin/**} must carry in {@code X-Admin-Token}, at least 32
 * characters; without one, the admin endpoints refuse every request
 */
@ConfigurationProperties("sample")
public record SampleProperties(Map<String, String> apiKeys, @Nullable String adminToken) {

	/** The shortest admin token: 32 characters, as {@code openssl rand -hex 16} writes 128 random bits. */
	static final int MIN_ADMIN_TOKEN_LENGTH = 32;

	public SampleProperties {
		apiKeys = (apiKeys != null) ? Map.copyOf(apiKeys) : Map.of();
		adminToken = (adminToken != null && !adminToken.isBlank()) ? adminToken : null;
		if (adminToken != null && adminToken.length() < MIN_ADMIN_TOKEN_LENGTH) {
			throw new IllegalArgumentException("'sample.admin-token' must be at least " + MIN_ADMIN_TOKEN_LENGTH
					+ " characters (openssl rand -hex 16) but has " + adminToken.length());
		}
	}

}
