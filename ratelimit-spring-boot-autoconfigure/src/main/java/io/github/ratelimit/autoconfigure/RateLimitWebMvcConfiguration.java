package io.github.ratelimit.autoconfigure;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.ratelimit.TimeSource;
import io.github.ratelimit.aop.FilterDefinition;
import io.github.ratelimit.aop.PlanOverride;
import io.github.ratelimit.aop.PolicyOverride;
import io.github.ratelimit.aop.RateLimitFilter;
import io.github.ratelimit.aop.RateLimitInterceptor;
import io.github.ratelimit.aop.RateLimitedAnnotationBeanPostProcessor;
import io.github.ratelimit.aop.RateLimitedMethodRegistry;
import io.github.ratelimit.limiter.RateLimiter;
import io.github.ratelimit.observation.RateLimitObservationConvention;
import io.github.ratelimit.store.RateLimitStore;
import io.github.ratelimit.web.ClientExemptions;
import io.github.ratelimit.web.ClientIpResolver;
import io.github.ratelimit.web.RateLimitPlanResolver;
import io.github.ratelimit.web.RateLimitHeadersWriter;
import io.github.ratelimit.web.StandardRateLimitHeadersWriter;
import io.github.ratelimit.web.TrustedProxiesClientIpResolver;
import io.micrometer.observation.ObservationRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.web.method.support.HandlerMethodArgumentResolver;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Interception of {@code @RateLimited} methods in a servlet web application, with the response headers and the
 * exception handler.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass(DispatcherServlet.class)
class RateLimitWebMvcConfiguration {

	@Bean
	@Role(BeanDefinition.ROLE_INFRASTRUCTURE)
	static RateLimitedAnnotationBeanPostProcessor rateLimitedAnnotationBeanPostProcessor(
			ObjectProvider<RateLimitInterceptor> rateLimitInterceptor, Environment environment) {
		RateLimitedAnnotationBeanPostProcessor postProcessor = new RateLimitedAnnotationBeanPostProcessor(
				rateLimitInterceptor);
		// As Spring Boot does for its own proxies: class-based unless spring.aop.proxy-target-class=false.
		postProcessor.setProxyTargetClass(environment.getProperty("spring.aop.proxy-target-class", Boolean.class, true));
		return postProcessor;
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitedMethodRegistry rateLimitedMethodRegistry(RateLimitProperties properties,
			ObjectProvider<RateLimitedAnnotationBeanPostProcessor> postProcessor, RateLimitStore store) {
		Map<String, PolicyOverride> overrides = new LinkedHashMap<>();
		properties.getPolicies()
			.forEach((name, policy) -> overrides.put(name, new PolicyOverride(policy.getLimit(), policy.getWindow(),
					policy.getAlgorithm(), policy.getBurst(), policy.isEnabled(), policy.getFailureMode(),
					policy.getKey(), policy.getCountOn(), policy.getSkip(), policy.getMode())));
		RateLimitedMethodRegistry registry = new RateLimitedMethodRegistry(overrides, properties.getFailureMode(),
				postProcessor.getIfAvailable(), store::checkSupported);
		Map<String, Map<String, PlanOverride>> plans = new LinkedHashMap<>();
		properties.getPlans().forEach((plan, policies) -> {
			Map<String, PlanOverride> changes = new LinkedHashMap<>();
			policies.forEach((policy, values) -> changes.put(policy,
					new PlanOverride(values.getLimit(), values.getWindow(), values.getBurst())));
			plans.put(plan, changes);
		});
		registry.setPlans(plans, properties.getDefaultPlan());
		Set<String> drawnByDisabledFilters = new HashSet<>();
		properties.getFilters().values().stream().filter((filter) -> !filter.isEnabled())
			.forEach((filter) -> filter.getPolicies().forEach((name) -> drawnByDisabledFilters.add(name.trim())));
		registry.setDrawnByDisabledFilters(drawnByDisabledFilters);
		return registry;
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitInterceptor rateLimitInterceptor(RateLimitedMethodRegistry registry, RateLimiter rateLimiter,
			RateLimitHeadersWriter headersWriter, ClientIpResolver clientIpResolver, RateLimitProperties properties,
			ObjectProvider<RateLimitPlanResolver> planResolver, ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<RateLimitObservationConvention> observationConvention) {
		RateLimitInterceptor interceptor = new RateLimitInterceptor(registry, rateLimiter, headersWriter,
				clientIpResolver);
		observationRegistry.ifAvailable((observations) -> interceptor.setObservationRegistry(observations,
				observationConvention.getIfAvailable()));
		interceptor.setPlanResolver(planResolver.getIfAvailable());
		interceptor.setAfterFilterLayer(properties.getFilters().values().stream().anyMatch(RateLimitProperties.Filter::isEnabled));
		interceptor.setExempt(ClientExemptions.of(properties.getClientIp().getExempt()));
		return interceptor;
	}

	/**
	 * The filter layer, registered just before Spring Security's filter chain unless {@code ratelimit.filter-order}
	 * says otherwise. Registered even when no filter is configured: it settles the policies that count by outcome
	 * from the status the client gets.
	 */
	@Bean
	@ConditionalOnMissingBean(name = "rateLimitFilterRegistration")
	FilterRegistrationBean<RateLimitFilter> rateLimitFilterRegistration(RateLimitProperties properties,
			RateLimitedMethodRegistry registry, RateLimiter rateLimiter, RateLimitHeadersWriter headersWriter,
			ClientIpResolver clientIpResolver, ObjectProvider<RateLimitPlanResolver> planResolver,
			ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<RateLimitObservationConvention> observationConvention) {
		List<FilterDefinition> definitions = new ArrayList<>();
		properties.getFilters().forEach((name, filter) -> {
			if (filter.isEnabled()) {
				definitions.add(new FilterDefinition(name, filter.getOrder(), filter.getPaths(), filter.getMethods(),
						filter.getKey(), filter.getLimit(), filter.getWindow(), filter.getAlgorithm(), filter.getBurst(),
						filter.getCost(), filter.getMode(), filter.getFailureMode(), filter.getSkip(),
						filter.getPolicies()));
			}
		});
		RateLimitFilter filter = new RateLimitFilter(definitions, registry, rateLimiter, headersWriter,
				clientIpResolver);
		observationRegistry.ifAvailable((observations) -> filter.setObservationRegistry(observations,
				observationConvention.getIfAvailable()));
		filter.setPlanResolver(planResolver.getIfAvailable());
		filter.setExempt(ClientExemptions.of(properties.getClientIp().getExempt()));
		FilterRegistrationBean<RateLimitFilter> registration = new FilterRegistrationBean<>(filter);
		registration.setName("rateLimitFilter");
		registration.setOrder(properties.getFilterOrder());
		return registration;
	}

	@Bean
	@ConditionalOnMissingBean(RateLimitHeadersWriter.class)
	StandardRateLimitHeadersWriter rateLimitHeadersWriter(RateLimitProperties properties,
			TimeSource rateLimitTimeSource) {
		RateLimitProperties.Headers headers = properties.getHeaders();
		return new StandardRateLimitHeadersWriter(EnumSet.copyOf(headers.getStyle()), headers.getResetFormat(),
				rateLimitTimeSource, headers.isShowSharedQuotas());
	}

	@Bean
	@ConditionalOnMissingBean(name = "rateLimitStatusWebMvcConfigurer")
	WebMvcConfigurer rateLimitStatusWebMvcConfigurer() {
		return new WebMvcConfigurer() {

			@Override
			public void addArgumentResolvers(List<HandlerMethodArgumentResolver> resolvers) {
				resolvers.add(new RateLimitStatusArgumentResolver());
			}

		};
	}

	@Bean
	@ConditionalOnMissingBean
	ClientIpResolver clientIpResolver(RateLimitProperties properties) {
		RateLimitProperties.ClientIp clientIp = properties.getClientIp();
		return new TrustedProxiesClientIpResolver(clientIp.getTrustedProxies(), clientIp.getForwardedHeader(),
				clientIp.getIpv4PrefixLength(), clientIp.getIpv6PrefixLength(), properties.getFailureLogInterval());
	}

	@Bean
	@ConditionalOnMissingBean
	RateLimitExceptionHandler rateLimitExceptionHandler() {
		return new RateLimitExceptionHandler();
	}

}
