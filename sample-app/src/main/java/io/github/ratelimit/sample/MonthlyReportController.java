package io.github.ratelimit.sample;

import java.util.Map;

import io.github.ratelimit.annotation.RateLimited;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Reports under a monthly quota: 20 per calendar month per API key (or client address), months of Berlin's
 * calendar. The quota comes back at midnight on the first in Berlin, whatever the month's length or the clocks'
 * change; the headers count down to it.
 */
@RestController
@RequestMapping("/api/v1")
class MonthlyReportController {

	@GetMapping("/monthly-reports")
	@RateLimited(name = "monthly-reports", limit = 20, window = "1M", zone = "Europe/Berlin",
			key = "@apiKeys.issued(#request.getHeader('X-API-Key')) ?: #clientIp",
			description = "Reports per API key, or client address, per calendar month in Berlin")
	Map<String, Object> report() {
		return Map.of("report", "monthly");
	}

}
