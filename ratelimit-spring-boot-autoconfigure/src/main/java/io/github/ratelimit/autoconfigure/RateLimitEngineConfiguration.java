package io.github.ratelimit.autoconfigure;

import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.aop.RateLimitedAnnotationBeanPostProcessor;
import io.github.ratelimit.client.OutboundRateLimits;
import io.github.ratelimit.engine.FilterDefinition;
import io.github.ratelimit.engine.HeavyHitters;
import io.github.ratelimit.engine.PolicyCatalog;
import io.github.ratelimit.engine.PolicyValues;
import io.github.ratelimit.engine.RateLimitEngine;
import io.github.ratelimit.engine.RateLimitTenants;
import io.github.ratelimit.engine.RuntimeChanges;
import io.github.ratelimit.engine.TenantLimitsSource;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.observation.RateLimitObservationConvention;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.web.ClientExemptions;
import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.RateLimitHeadersWriter;
import io.github.ratelimit.web.RateLimitPlanResolver;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import io.github.ratelimit.web.TrustedProxiesClientIpResolver;
import io.micrometer.observation.ObservationRegistry;
import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.cache.Cache;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.core.io.ResourceLoader;
import org.springframework.util.ClassUtils;

/**
 * The policy engine, whatever the entry point (a web stack, gRPC, the calls the application makes): every policy from
 * the annotations and {@code ratelimit.*} ({@link PolicyCatalog}), and the engine that decides a request's limits,
 * with the response headers' writer and the client's address.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnClass(RateLimitEngine.class)
class RateLimitEngineConfiguration {

	private static final String CAFFEINE = "com.github.benmanes.caffeine.cache.Caffeine";

	@Bean
	@ConditionalOnMissingBean
	PolicyCatalog rateLimitPolicyCatalog(RateLimitProperties properties, RateLimitStore store,
			ObjectProvider<PolicyCatalog.RateLimitedClasses> rateLimitedClasses) {
		Map<String, PolicyValues> policies = new LinkedHashMap<>();
		properties.getPolicies().forEach((name, policy) -> policies.put(name, policy.toValues(property("policies", name))));
		Map<String, Map<String, PolicyValues>> plans = new LinkedHashMap<>();
		properties.getPlans().forEach((plan, changes) -> {
			Map<String, PolicyValues> values = new LinkedHashMap<>();
			changes.forEach((name, change) -> values.put(name, change.toValues(property("plans." + plan, name))));
			plans.put(plan, values);
		});
		List<FilterDefinition> filters = properties.getFilters()
			.entrySet()
			.stream()
			.filter((entry) -> entry.getValue().isEnabled())
			.map((entry) -> new FilterDefinition(entry.getKey(), entry.getValue().getOrder(),
					entry.getValue().getPaths(), entry.getValue().getMethods(),
					entry.getValue().toValues(property("filters", entry.getKey())), entry.getValue().getPolicies()))
			.toList();
		Set<String> drawnByDisabledFilters = properties.getFilters()
			.values()
			.stream()
			.filter((filter) -> !filter.isEnabled())
			.flatMap((filter) -> filter.getPolicies().stream().map(String::trim))
			.collect(Collectors.toSet());
		return PolicyCatalog.builder()
			.policies(policies)
			.plans(plans, properties.getDefaultPlan())
			.filters(filters)
			.drawnByDisabledFilters(drawnByDisabledFilters)
			.defaultFailureMode(properties.getFailureMode())
			.storeCheck(store::checkSupported)
			.sharedKeyCheck(store::checkSharedKey)
			.rateLimitedClasses(rateLimitedClasses.getIfAvailable())
			.build();
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitEngine rateLimitEngine(PolicyCatalog catalog, RateLimiter rateLimiter,
			RateLimitHeadersWriter headersWriter, ClientIpResolver clientIpResolver, RateLimitProperties properties,
			ObjectProvider<RateLimitPlanResolver> planResolver, ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<RateLimitObservationConvention> observationConvention,
			ObjectProvider<RateLimitTenants> tenants) {
		return RateLimitEngine.builder(catalog, rateLimiter, headersWriter, clientIpResolver)
			.planResolver(planResolver.getIfAvailable())
			.tenants(tenants.getIfAvailable())
			.heavyHitters(properties.getHeavyHitters().isEnabled() ? new HeavyHitters() : null)
			.exempt(ClientExemptions.of(properties.getClientIp().getExempt()))
			.observationRegistry(observationRegistry.getIfAvailable(() -> ObservationRegistry.NOOP),
					observationConvention.getIfAvailable())
			.build();
	}

	@Bean
	@ConditionalOnMissingBean(RateLimitHeadersWriter.class)
	StandardRateLimitHeadersWriter rateLimitHeadersWriter(RateLimitProperties properties,
			TimeSource rateLimitTimeSource) {
		HeadersProperties headers = properties.getHeaders();
		return new StandardRateLimitHeadersWriter(EnumSet.copyOf(headers.getStyle()), headers.getResetFormat(),
				rateLimitTimeSource, headers.isShowSharedQuotas());
	}

	@Bean
	@ConditionalOnMissingBean
	ClientIpResolver clientIpResolver(RateLimitProperties properties) {
		return clientIpResolverOf(properties);
	}

	/** The client's address as {@code ratelimit.client-ip} says: also what keys a gateway's routes with limits off. */
	static TrustedProxiesClientIpResolver clientIpResolverOf(RateLimitProperties properties) {
		ClientIpProperties clientIp = properties.getClientIp();
		return new TrustedProxiesClientIpResolver(clientIp.getTrustedProxies(), clientIp.getForwardedHeader(),
				clientIp.getIpv4PrefixLength(), clientIp.getIpv6PrefixLength(), properties.getFailureLogInterval());
	}

	@Bean
	@ConditionalOnBean(TenantLimitsSource.class)
	@ConditionalOnMissingBean
	RateLimitTenants rateLimitTenants(TenantLimitsSource source, RateLimitProperties properties,
			ResourceLoader resourceLoader) {
		TenantsProperties tenants = properties.getTenants();
		TenantsProperties.Cache settings = tenants.getCache();
		Cache cache = ClassUtils.isPresent(CAFFEINE, resourceLoader.getClassLoader())
				? CaffeineTenantCache.create(settings.getMaximumSize())
				: RateLimitTenants.boundedCache(settings.getMaximumSize());
		return new RateLimitTenants(source, cache, tenants.getTimeout(), settings.getTimeToLive(),
				tenants.getThreads());
	}

	@Bean
	@ConditionalOnMissingBean
	RuntimeChanges rateLimitRuntimeChanges(PolicyCatalog catalog, RateLimitStore store, Environment environment) {
		// ratelimit.changes.secret is described in additional-spring-configuration-metadata.json.
		return new RuntimeChanges(catalog, store.sharedChanges(), environment.getProperty("ratelimit.changes.secret"));
	}

	/** With Spring Cloud's refresh, {@code ratelimit.policies} changes apply without a restart. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(name = "org.springframework.cloud.context.environment.EnvironmentChangeEvent")
	static class RefreshConfiguration {

		@Bean
		@ConditionalOnMissingBean
		RateLimitRefreshListener rateLimitRefreshListener(RuntimeChanges changes, Environment environment) {
			return new RateLimitRefreshListener(changes, environment);
		}

	}

	/** Limits on the calls the application makes, with the client module. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(OutboundRateLimits.class)
	static class OutboundConfiguration {

		@Bean
		@ConditionalOnMissingBean
		OutboundRateLimits outboundRateLimits(RateLimitEngine engine, RuntimeChanges changes) {
			return new OutboundRateLimits(engine, changes);
		}

	}

	/** The proxies of {@code @RateLimited} beans, class-based unless {@code spring.aop.proxy-target-class=false}. */
	static RateLimitedAnnotationBeanPostProcessor proxies(ObjectProvider<? extends MethodInterceptor> interceptor,
			Consumer<Class<?>> classCheck, Environment environment) {
		RateLimitedAnnotationBeanPostProcessor postProcessor = new RateLimitedAnnotationBeanPostProcessor(interceptor,
				classCheck);
		postProcessor.setProxyTargetClass(environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true));
		return postProcessor;
	}

	/** The property prefix of a policy, plan or filter: its name bracketed when it has a dot. */
	private static String property(String group, String name) {
		return "ratelimit." + group + "." + (name.contains(".") ? "[" + name + "]" : name);
	}

}
