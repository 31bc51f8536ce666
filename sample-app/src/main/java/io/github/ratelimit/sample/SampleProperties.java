package io.github.ratelimit.sample;

import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The sample's own settings.
 *
 * @param apiKeys the API keys this API issued, each with its plan (a real application keeps them in its database)
 * @param adminToken the token a request to {@code /admin/**} must carry in {@code X-Admin-Token}; without one, the
 * admin endpoints refuse every request
 */
@ConfigurationProperties("sample")
public record SampleProperties(Map<String, String> apiKeys, @Nullable String adminToken) {

	public SampleProperties {
		apiKeys = (apiKeys != null) ? Map.copyOf(apiKeys) : Map.of();
		adminToken = (adminToken != null && !adminToken.isBlank()) ? adminToken : null;
	}

}
